//! The enumerations of the billing area.

use crate::open_enum::open_enum;

mediagen_openapi::currency_values! {
    open_enum! {
        /// Currency of an amount: the service bills in roubles.
        ///
        /// ```
        /// assert_eq!(mediagen::Currency::from("RUB"), mediagen::Currency::Rub);
        /// ```
        pub enum Currency
    }
}

mediagen_openapi::billing_operation_type_values! {
    open_enum! {
        /// Kind of a balance history entry (`type`).
        ///
        /// ```
        /// let kind: mediagen::BillingOperationType = serde_json::from_str(r#""GENERATION_CHARGE""#)?;
        /// assert_eq!(kind, mediagen::BillingOperationType::GenerationCharge);
        /// # Ok::<(), serde_json::Error>(())
        /// ```
        pub enum BillingOperationType
    }
}

mediagen_openapi::billing_operation_status_values! {
    open_enum! {
        /// State of a balance history entry (`status`).
        ///
        /// ```
        /// assert_eq!(mediagen::BillingOperationStatus::Refunded.as_str(), "REFUNDED");
        /// ```
        pub enum BillingOperationStatus
    }
}

mediagen_openapi::invoice_status_values! {
    open_enum! {
        /// State of an invoice (`status`).
        ///
        /// ```
        /// assert_eq!(mediagen::InvoiceStatus::from("PAID"), mediagen::InvoiceStatus::Paid);
        /// ```
        pub enum InvoiceStatus
    }
}

mediagen_openapi::topup_status_values! {
    open_enum! {
        /// State of a top-up (`status`).
        ///
        /// ```
        /// assert!(!mediagen::TopupStatus::from("REVERSED").is_known());
        /// ```
        pub enum TopupStatus
    }
}
