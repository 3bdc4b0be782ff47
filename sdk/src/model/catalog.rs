//! The enumerations of the catalogue and the health check.

use crate::open_enum::open_enum;

mediagen_openapi::model_status_values! {
    open_enum! {
        /// State of a catalogue model (`status`).
        ///
        /// ```
        /// let status: mediagen::ModelStatus = serde_json::from_str(r#""available""#)?;
        /// assert_eq!(status, mediagen::ModelStatus::Available);
        /// assert_eq!(mediagen::ModelStatus::from("paused").to_string(), "paused");
        /// # Ok::<(), serde_json::Error>(())
        /// ```
        pub enum ModelStatus
    }
}

mediagen_openapi::model_parameter_type_values! {
    open_enum! {
        /// Type of a model parameter's value (`type` of a catalogue parameter).
        ///
        /// ```
        /// assert_eq!(mediagen::ModelParameterType::from("file"), mediagen::ModelParameterType::File);
        /// ```
        pub enum ModelParameterType
    }
}

mediagen_openapi::price_unit_values! {
    open_enum! {
        /// What a model's price counts (`pricing.unit`).
        ///
        /// ```
        /// assert_eq!(mediagen::PriceUnit::Second.as_str(), "second");
        /// ```
        pub enum PriceUnit
    }
}

mediagen_openapi::health_status_values! {
    open_enum! {
        /// `status` of the liveness check.
        ///
        /// ```
        /// assert!(mediagen::HealthStatus::from("ok").is_known());
        /// ```
        pub enum HealthStatus
    }
}
