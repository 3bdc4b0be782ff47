//! The catalogue of models: their parameters and how their price is computed.
//!
//! The shape is the contract's `Catalog` schema, so the same file is what
//! `GET /v1/catalog/` answers and what `--catalog FILE` loads.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::money::Kopecks;

/// The catalogue served when no `--catalog` file is given.
pub const DEFAULT_CATALOG_JSON: &str = include_str!("../../catalog.json");

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Catalog {
    pub models: Vec<Model>,
}

impl Catalog {
    /// The built-in catalogue: two or more models of every media type.
    pub fn default_catalog() -> Self {
        Self::from_json(DEFAULT_CATALOG_JSON).expect("the built-in catalog is valid")
    }

    /// Reads a catalogue in the contract's `Catalog` shape and checks what the
    /// mock relies on: unique slugs and prices that can be computed.
    pub fn from_json(text: &str) -> Result<Self, CatalogError> {
        let catalog: Self = serde_json::from_str(text)?;
        let mut seen = std::collections::HashSet::new();
        for model in &catalog.models {
            if !seen.insert(model.slug.as_str()) {
                return Err(CatalogError::DuplicateSlug(model.slug.clone()));
            }
            if !(model.pricing.base_rub.is_finite() && model.pricing.base_rub >= 0.0) {
                return Err(CatalogError::BadPrice(model.slug.clone()));
            }
        }
        Ok(catalog)
    }

    pub fn get(&self, slug: &str) -> Option<&Model> {
        self.models.iter().find(|m| m.slug == slug)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    #[error("the catalog is not in the contract's Catalog shape: {0}")]
    Shape(#[from] serde_json::Error),
    #[error("model slug {0:?} appears twice")]
    DuplicateSlug(String),
    #[error("model {0:?} has a negative or non-finite baseRub")]
    BadPrice(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum MediaType {
    Image,
    Video,
    Voice,
    Music,
}

impl MediaType {
    pub const ALL: [Self; 4] = [Self::Image, Self::Video, Self::Voice, Self::Music];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Image => "IMAGE",
            Self::Video => "VIDEO",
            Self::Voice => "VOICE",
            Self::Music => "MUSIC",
        }
    }
}

/// The state of a model as the control API sets it (`POST /_mock/models/{slug}/state`),
/// over the catalogue's own status: the model errors of rule 9 on demand.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum ModelState {
    /// Creation works.
    #[default]
    Available,
    /// 403 `MODEL_NOT_AVAILABLE`.
    Disabled,
    /// 410 `MODEL_UNAVAILABLE`.
    Withdrawn,
    /// 503 `UPSTREAM_CIRCUIT_OPEN`.
    CircuitOpen,
    /// 503 `MARGIN_GUARD`.
    MarginGuard,
    /// 400 `VALIDATION_ERROR`: `Model pricing not configured`.
    PricingMissing,
}

/// The message of the validation error for a model without a price (rule 9).
pub const PRICING_MISSING: &str = "Model pricing not configured";

impl ModelState {
    /// The state in force for `model`: the one the control API set, else what the
    /// catalogue says of it.
    pub fn in_force(self, model: &Model) -> Self {
        match (self, model.status) {
            (Self::Available, PublicStatus::Disabled) => Self::Disabled,
            (Self::Available, PublicStatus::Withdrawn) => Self::Withdrawn,
            (set, _) => set,
        }
    }

    /// Whether a create or an estimate may go on with `model` in this state,
    /// or the refusal of rule 9.
    pub fn admits(self, model: &Model) -> Result<(), ModelRefused> {
        match self.in_force(model) {
            Self::Available => Ok(()),
            state => Err(ModelRefused {
                slug: model.slug.clone(),
                state,
            }),
        }
    }

    /// What the public catalogue shows for `model` in this state.
    pub fn public_status(self, model: &Model) -> PublicStatus {
        match self {
            Self::Disabled => PublicStatus::Disabled,
            Self::Withdrawn => PublicStatus::Withdrawn,
            _ => model.status,
        }
    }
}

/// A model refused by its state (rule 9 of `POST /v1/generations`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelRefused {
    /// The model.
    pub slug: String,
    /// Its state in force: never `Available`.
    pub state: ModelState,
}

/// Availability as the public catalogue shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum PublicStatus {
    #[default]
    Available,
    Disabled,
    Withdrawn,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Model {
    pub slug: String,
    pub name: String,
    pub media_type: MediaType,
    pub description: String,
    #[serde(default)]
    pub status: PublicStatus,
    pub max_prompt_length: usize,
    pub average_duration_seconds: f64,
    pub parameters: Vec<ModelParameter>,
    pub pricing: Pricing,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ParamType {
    String,
    Integer,
    Number,
    Boolean,
    File,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelParameter {
    pub name: String,
    #[serde(rename = "type")]
    pub kind: ParamType,
    pub required: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed_values: Option<Vec<Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub minimum: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub maximum: Option<f64>,
    pub description: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PriceUnit {
    Generation,
    Second,
    ThousandCharacters,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Pricing {
    pub currency: String,
    pub unit: PriceUnit,
    pub base_rub: f64,
    pub factors: Vec<PriceFactor>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PriceFactor {
    pub parameter: String,
    pub value: String,
    pub multiplier: f64,
}

impl Model {
    /// The value of parameter `name` for a request: the given one, else the
    /// model's default.
    pub fn param<'a>(&'a self, params: &'a Map<String, Value>, name: &str) -> Option<&'a Value> {
        params.get(name).or_else(|| {
            self.parameters
                .iter()
                .find(|p| p.name == name)
                .and_then(|p| p.default.as_ref())
        })
    }

    /// The price of a request, following the contract's `ModelPricing`:
    /// `baseRub × units × Π multipliers`, rounded to kopecks.
    ///
    /// Call it on validated params: a non-numeric duration counts as one unit.
    pub fn cost(&self, prompt: &str, params: &Map<String, Value>) -> Kopecks {
        let units = match self.pricing.unit {
            PriceUnit::Generation => 1.0,
            PriceUnit::Second => self
                .param(params, "duration")
                .and_then(Value::as_f64)
                .unwrap_or(1.0)
                .max(1.0),
            PriceUnit::ThousandCharacters => {
                (prompt.chars().count() as f64 / 1000.0).ceil().max(1.0)
            }
        };
        let factor: f64 = self
            .pricing
            .factors
            .iter()
            .filter(|f| {
                self.param(params, &f.parameter).is_some_and(|v| match v {
                    // Most values are text: compared as they are, not copied.
                    Value::String(text) => *text == f.value,
                    other => value_text(other) == f.value,
                })
            })
            .map(|f| f.multiplier)
            .product();
        Kopecks::from_rub(self.pricing.base_rub * units * factor)
    }

    /// Seconds of output for audio and video results (for the files the mock renders).
    pub fn output_seconds(&self, params: &Map<String, Value>) -> f32 {
        self.param(params, "duration")
            .and_then(Value::as_f64)
            .map_or(3.0, |d| d as f32)
    }
}

/// A parameter value as the price table writes it (`"16:9"`, `"10"`, `"true"`).
pub fn value_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn params(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn default_catalog_has_two_models_of_every_media_type() {
        let catalog = Catalog::default_catalog();
        for kind in MediaType::ALL {
            let n = catalog
                .models
                .iter()
                .filter(|m| m.media_type == kind)
                .count();
            assert!(n >= 2, "{kind:?}: {n} models");
        }
    }

    #[test]
    fn price_depends_on_parameters_through_multipliers() {
        let catalog = Catalog::default_catalog();
        let model = catalog
            .models
            .iter()
            .find(|m| m.media_type == MediaType::Image && !m.pricing.factors.is_empty())
            .expect("an image model with price factors");
        let factor = &model.pricing.factors[0];
        let base = model.cost("p", &Map::new());
        let with = model.cost(
            "p",
            &params(json!({ factor.parameter.clone(): factor.value.clone() })),
        );
        let expected = Kopecks::from_rub(model.pricing.base_rub * factor.multiplier);
        assert_eq!(with, expected);
        assert_ne!(with, base);
    }

    #[test]
    fn per_second_price_scales_with_duration() {
        let catalog = Catalog::default_catalog();
        let model = catalog
            .models
            .iter()
            .find(|m| m.pricing.unit == PriceUnit::Second)
            .expect("a per-second model");
        let five = model.cost("p", &params(json!({"duration": 5})));
        let ten = model.cost("p", &params(json!({"duration": 10})));
        assert_eq!(ten.0, five.0 * 2);
    }

    #[test]
    fn per_thousand_characters_rounds_up() {
        let catalog = Catalog::default_catalog();
        let model = catalog
            .models
            .iter()
            .find(|m| m.pricing.unit == PriceUnit::ThousandCharacters)
            .expect("a per-character model");
        let short = model.cost("a", &Map::new());
        let long = model.cost(&"a".repeat(1001), &Map::new());
        assert_eq!(long.0, short.0 * 2);
    }

    #[test]
    fn duplicate_slugs_are_refused() {
        let one = r#"{"slug":"a","name":"A","mediaType":"IMAGE","description":"d","maxPromptLength":10,
            "averageDurationSeconds":1,"parameters":[],"pricing":{"currency":"RUB","unit":"generation","baseRub":1,"factors":[]}}"#;
        let text = format!(r#"{{"models":[{one},{one}]}}"#);
        assert!(
            matches!(Catalog::from_json(&text), Err(CatalogError::DuplicateSlug(s)) if s == "a")
        );
    }
}
