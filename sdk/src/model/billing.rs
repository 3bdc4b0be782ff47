//! The enumerations of the billing area.

use crate::open_enum::open_enum;

open_enum! {
    /// Currency of an amount: the service bills in roubles.
    ///
    /// ```
    /// assert_eq!(mediagen::Currency::from("RUB"), mediagen::Currency::Rub);
    /// ```
    pub enum Currency {
        /// Russian roubles.
        Rub = "RUB",
    }
}

open_enum! {
    /// Kind of a balance history entry (`type`).
    ///
    /// ```
    /// let kind: mediagen::BillingOperationType = serde_json::from_str(r#""GENERATION_CHARGE""#)?;
    /// assert_eq!(kind, mediagen::BillingOperationType::GenerationCharge);
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    pub enum BillingOperationType {
        /// A card top-up or a paid invoice.
        Topup = "TOPUP",
        /// The cost of one generation.
        GenerationCharge = "GENERATION_CHARGE",
        /// A manual correction.
        Adjustment = "ADJUSTMENT",
    }
}

open_enum! {
    /// State of a balance history entry (`status`).
    ///
    /// ```
    /// assert_eq!(mediagen::BillingOperationStatus::Refunded.as_str(), "REFUNDED");
    /// ```
    pub enum BillingOperationStatus {
        /// Held for an active task.
        Reserved = "RESERVED",
        /// The task finished: the charge is kept.
        Charged = "CHARGED",
        /// The task failed or was cancelled: the charge was returned.
        Refunded = "REFUNDED",
        /// A top-up or an adjustment that took effect.
        Completed = "COMPLETED",
    }
}

open_enum! {
    /// State of an invoice (`status`).
    ///
    /// ```
    /// assert_eq!(mediagen::InvoiceStatus::from("PAID"), mediagen::InvoiceStatus::Paid);
    /// ```
    pub enum InvoiceStatus {
        /// Awaiting payment by bank transfer.
        Issued = "ISSUED",
        /// Paid: the balance is credited and the closing act is available.
        Paid = "PAID",
        /// Cancelled.
        Cancelled = "CANCELLED",
    }
}

open_enum! {
    /// State of a top-up (`status`).
    ///
    /// ```
    /// assert!(!mediagen::TopupStatus::from("REVERSED").is_known());
    /// ```
    pub enum TopupStatus {
        /// Awaiting payment on `paymentUrl`.
        Pending = "PENDING",
        /// Paid: the balance is credited.
        Succeeded = "SUCCEEDED",
        /// The payment failed.
        Failed = "FAILED",
    }
}
