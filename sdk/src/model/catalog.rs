//! The enumerations of the catalogue and the health check.

use crate::open_enum::open_enum;

open_enum! {
    /// State of a catalogue model (`status`).
    ///
    /// ```
    /// let status: mediagen::ModelStatus = serde_json::from_str(r#""available""#)?;
    /// assert_eq!(status, mediagen::ModelStatus::Available);
    /// assert_eq!(mediagen::ModelStatus::from("paused").to_string(), "paused");
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    pub enum ModelStatus {
        /// Creation works.
        Available = "available",
        /// Switched off: creation gives 403 `MODEL_NOT_AVAILABLE`.
        Disabled = "disabled",
        /// Withdrawn by the provider: creation gives 410 `MODEL_UNAVAILABLE`.
        Withdrawn = "withdrawn",
    }
}

open_enum! {
    /// Type of a model parameter's value (`type` of a catalogue parameter).
    ///
    /// ```
    /// assert_eq!(mediagen::ModelParameterType::from("file"), mediagen::ModelParameterType::File);
    /// ```
    pub enum ModelParameterType {
        /// Text.
        String = "string",
        /// A whole number.
        Integer = "integer",
        /// A number.
        Number = "number",
        /// `true` or `false`.
        Boolean = "boolean",
        /// A `fileId` from `POST /v1/files`.
        File = "file",
    }
}

open_enum! {
    /// What a model's price counts (`pricing.unit`).
    ///
    /// ```
    /// assert_eq!(mediagen::PriceUnit::Second.as_str(), "second");
    /// ```
    pub enum PriceUnit {
        /// One per task.
        Generation = "generation",
        /// Seconds of `params.duration`.
        Second = "second",
        /// Thousands of characters of the prompt, rounded up.
        ThousandCharacters = "thousand_characters",
    }
}

open_enum! {
    /// `status` of the liveness check.
    ///
    /// ```
    /// assert!(mediagen::HealthStatus::from("ok").is_known());
    /// ```
    pub enum HealthStatus {
        /// The service answers.
        Ok = "ok",
    }
}
