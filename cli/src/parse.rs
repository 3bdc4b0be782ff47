//! Value parsers: the text of one command-line value made typed, or refused with a
//! message that says what the value looks like. The clap types in `cli/` name them;
//! nothing here knows a flag.

use std::time::Duration;

use clap::builder::{PossibleValue, StringValueParser, TypedValueParser};

/// A value parsed by `parser`, with the values this version knows offered to the
/// help and to shell completion. Any other value is taken as well and goes to the
/// service as typed: its sets are open, and a newer service may know more.
#[derive(Clone)]
pub struct Suggest<P> {
    known: &'static [&'static str],
    parser: P,
}

impl<P> Suggest<P> {
    pub fn new(known: &'static [&'static str], parser: P) -> Self {
        Self { known, parser }
    }
}

impl Suggest<StringValueParser> {
    /// Any text, with `known` offered.
    pub fn text(known: &'static [&'static str]) -> Self {
        Self::new(known, StringValueParser::new())
    }
}

impl<P: TypedValueParser> TypedValueParser for Suggest<P> {
    type Value = P::Value;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<Self::Value, clap::Error> {
        self.parser.parse_ref(cmd, arg, value)
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(self.known.iter().copied().map(PossibleValue::new)))
    }
}

/// The event filters of an endpoint: the events this version knows, every
/// generation event, or all.
pub fn event_filter() -> Suggest<StringValueParser> {
    Suggest::text(mediagen::EventTypeFilter::KNOWN)
}

/// An HTTP method, offered as the five the service uses.
pub fn method() -> impl TypedValueParser<Value = reqwest::Method> {
    Suggest::new(&["GET", "POST", "PUT", "PATCH", "DELETE"], parse_method)
}

/// A UUID, or a refusal that says what `what` looks like.
fn uuid_of(raw: &str, what: &str) -> Result<uuid::Uuid, String> {
    uuid::Uuid::parse_str(raw)
        .map_err(|_| format!("{what} is a UUID, such as 3f6c1a52-8d4e-4b7a-9c21-5e8f0d3b7a19"))
}

pub fn generation_id(raw: &str) -> Result<uuid::Uuid, String> {
    uuid_of(raw, "a generation id")
}

pub fn invoice_id(raw: &str) -> Result<uuid::Uuid, String> {
    uuid_of(raw, "an invoice id")
}

pub fn file_id(raw: &str) -> Result<uuid::Uuid, String> {
    uuid_of(raw, "a file id")
}

pub fn message_id(raw: &str) -> Result<uuid::Uuid, String> {
    uuid_of(raw, "a message's webhook-id")
}

/// Roubles: a number above 0, with a dot for the kopecks.
pub fn amount(raw: &str) -> Result<f64, String> {
    match raw.trim().parse::<f64>() {
        Ok(amount) if amount.is_finite() && amount > 0.0 => Ok(amount),
        _ => Err("an amount is a number of roubles above 0, such as 1500 or 99.50".to_owned()),
    }
}

/// A number of the requisites, checked against the contract's pattern by the
/// SDK's type for it, or refused saying what it `looks` like. Check digits are the
/// service's to judge.
fn requisite<T: std::str::FromStr>(raw: &str, looks: &str) -> Result<String, String> {
    raw.parse::<T>()
        .map(|_| raw.to_owned())
        .map_err(|_| looks.to_owned())
}

pub fn inn(raw: &str) -> Result<String, String> {
    requisite::<mediagen::RequisitesInputInn>(
        raw,
        "an INN is 10 digits (an organisation) or 12 (a sole proprietor)",
    )
}

pub fn kpp(raw: &str) -> Result<String, String> {
    requisite::<mediagen::RequisitesInputKpp>(raw, "a KPP is 9 digits")
}

pub fn ogrn(raw: &str) -> Result<String, String> {
    requisite::<mediagen::RequisitesInputOgrn>(
        raw,
        "an OGRN is 13 digits, or 15 for a sole proprietor's OGRNIP",
    )
}

pub fn bic(raw: &str) -> Result<String, String> {
    requisite::<mediagen::RequisitesInputBic>(raw, "a BIC is 9 digits starting 04")
}

pub fn settlement_account(raw: &str) -> Result<String, String> {
    requisite::<mediagen::RequisitesInputSettlementAccount>(
        raw,
        "a settlement account is 20 digits",
    )
}

pub fn correspondent_account(raw: &str) -> Result<String, String> {
    requisite::<mediagen::RequisitesInputCorrespondentAccount>(
        raw,
        "a correspondent account is 20 digits starting 301",
    )
}

/// A name or an address: any text but a blank one.
pub fn text(raw: &str) -> Result<String, String> {
    if raw.trim().is_empty() {
        Err("it is blank".to_owned())
    } else {
        Ok(raw.to_owned())
    }
}

/// A time: RFC 3339, or a date for its midnight UTC.
pub fn time(raw: &str) -> Result<chrono::DateTime<chrono::Utc>, String> {
    chrono::DateTime::parse_from_rfc3339(raw)
        .map(|time| time.to_utc())
        .or_else(|_| {
            chrono::NaiveDate::parse_from_str(raw, "%Y-%m-%d")
                .map(|date| date.and_time(chrono::NaiveTime::MIN).and_utc())
        })
        .map_err(|_| {
            "a time is RFC 3339, such as 2026-11-01T09:30:00Z, or a date, such as 2026-11-01"
                .to_owned()
        })
}

/// `KEY=VALUE`, the value read as JSON when it parses and as text otherwise.
pub fn param(raw: &str) -> Result<(String, serde_json::Value), String> {
    let (key, value) = raw
        .split_once('=')
        .ok_or_else(|| format!("`{raw}` is not KEY=VALUE"))?;
    if key.is_empty() {
        return Err(format!("`{raw}` has no KEY before ="));
    }
    // `16:9` and `1024x1024` stay text; `4`, `true` and `[1,2]` become JSON.
    let value =
        serde_json::from_str(value).unwrap_or_else(|_| serde_json::Value::String(value.to_owned()));
    Ok((key.to_owned(), value))
}

fn parse_method(raw: &str) -> Result<reqwest::Method, String> {
    reqwest::Method::from_bytes(raw.to_ascii_uppercase().as_bytes())
        .map_err(|_| format!("`{raw}` is not an HTTP method such as GET or POST"))
}

/// A path of the service. A full URL is refused: the request carries the API key,
/// which must never go to a host the user did not configure.
pub fn service_path(raw: &str) -> Result<String, String> {
    if raw.starts_with('/') && !raw.starts_with("//") {
        return Ok(raw.to_owned());
    }
    // `//host/…` is a URL too, to whatever scheme the base URL has.
    if raw.contains("://") || raw.starts_with("//") {
        return Err(format!(
            "`{raw}` is a URL; give the path alone, such as /v1/catalog/: the request goes to \
             the configured base URL only, since it carries the API key"
        ));
    }
    Err(format!(
        "`{raw}` is not a path of the service: it starts with one /, such as /v1/catalog/"
    ))
}

/// `NAME:VALUE`, both trimmed.
pub fn header(raw: &str) -> Result<(String, String), String> {
    match raw.split_once(':') {
        Some((name, value)) if !name.trim().is_empty() => {
            Ok((name.trim().to_owned(), value.trim().to_owned()))
        }
        _ => Err(format!("`{raw}` is not NAME:VALUE")),
    }
}

/// `90s`, `10m`, `1h30m`, or plain seconds.
/// `mock logs --status`: a status (404) or a class of them (4xx).
#[cfg(feature = "mock")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatusFilter {
    Exactly(u16),
    Class(u16),
}

#[cfg(feature = "mock")]
impl StatusFilter {
    pub fn matches(self, status: u16) -> bool {
        match self {
            Self::Exactly(wanted) => status == wanted,
            Self::Class(class) => status / 100 == class,
        }
    }
}

#[cfg(feature = "mock")]
pub fn status_filter(raw: &str) -> Result<StatusFilter, String> {
    let wrong = || format!("'{raw}' is neither a status (404) nor a class of them (4xx)");
    match raw.to_ascii_lowercase().as_bytes() {
        [class @ b'1'..=b'5', b'x', b'x'] => Ok(StatusFilter::Class(u16::from(class - b'0'))),
        _ => match raw.parse::<u16>() {
            Ok(status) if (100..=599).contains(&status) => Ok(StatusFilter::Exactly(status)),
            _ => Err(wrong()),
        },
    }
}

/// `--jq`: a filter compiled now, so that a mistake is a usage error before anything
/// is sent.
pub fn jq(raw: &str) -> Result<crate::jq::Filter, String> {
    crate::jq::Filter::new(raw)
}

pub fn duration(raw: &str) -> Result<Duration, String> {
    humantime::parse_duration(raw)
        .ok()
        .or_else(|| Duration::try_from_secs_f64(raw.parse().ok()?).ok())
        .ok_or_else(|| format!("`{raw}` is not a duration such as 90s, 10m or 1h30m"))
}

/// An address on this machine's loopback interface: `mediagen mcp --listen` serves
/// no other network, since its tools spend the key's money.
pub fn loopback(raw: &str) -> Result<std::net::SocketAddr, String> {
    match raw.parse::<std::net::SocketAddr>() {
        Ok(addr) if addr.ip().is_loopback() => Ok(addr),
        Ok(addr) => Err(format!(
            "{addr} is not a loopback address: use 127.0.0.1:PORT or [::1]:PORT"
        )),
        Err(_) => Err(format!("`{raw}` is not an address such as 127.0.0.1:8931")),
    }
}

/// A URL to forward to: http or https, and `localhost:3000/hooks` read as http.
pub fn forward_url(raw: &str) -> Result<url::Url, String> {
    let full = if raw.contains("://") {
        raw.to_owned()
    } else {
        format!("http://{raw}")
    };
    let url = url::Url::parse(&full).map_err(|err| format!("`{raw}` is not a URL: {err}"))?;
    if !matches!(url.scheme(), "http" | "https") || !url.has_host() {
        return Err(format!("`{raw}` is not an http or https URL"));
    }
    Ok(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(feature = "mock")]
    #[test]
    fn a_status_filter_is_a_status_or_a_class() {
        assert_eq!(status_filter("4xx"), Ok(StatusFilter::Class(4)));
        assert_eq!(status_filter("5XX"), Ok(StatusFilter::Class(5)));
        assert_eq!(status_filter("404"), Ok(StatusFilter::Exactly(404)));
        assert!(StatusFilter::Class(4).matches(429));
        assert!(!StatusFilter::Class(4).matches(500));
        for wrong in ["4x", "6xx", "99", "600", "abc"] {
            assert!(status_filter(wrong).is_err(), "{wrong}");
        }
    }

    #[test]
    fn params_are_json_when_they_parse_and_text_otherwise() {
        assert_eq!(param("steps=4").unwrap().1, serde_json::json!(4));
        assert_eq!(
            param("aspect_ratio=16:9").unwrap().1,
            serde_json::json!("16:9")
        );
        assert_eq!(param("seed=").unwrap().1, serde_json::json!(""));
        assert!(param("=4").is_err());
        assert!(param("steps").is_err());
    }

    #[test]
    fn forward_to_takes_only_http_urls() {
        assert!(forward_url("ftp://example.com/").is_err());
        assert!(forward_url("http://").is_err());
        assert!(forward_url("localhost:notaport").is_err());
    }

    #[test]
    fn api_takes_a_path_of_the_service_and_never_a_url() {
        assert_eq!(
            service_path("/v1/generations?limit=5").unwrap(),
            "/v1/generations?limit=5"
        );
        assert!(service_path("https://elsewhere.example/v1/catalog/").is_err());
        assert!(service_path("//elsewhere.example/v1/catalog/").is_err());
        assert!(service_path("v1/catalog/").is_err());
        assert_eq!(parse_method("patch").unwrap(), reqwest::Method::PATCH);
        assert!(parse_method("GET POST").is_err());
        assert_eq!(
            header("Idempotency-Key: order-17").unwrap(),
            ("Idempotency-Key".to_owned(), "order-17".to_owned())
        );
        assert!(header("no colon").is_err());
    }

    #[test]
    fn requisites_are_refused_by_their_form_and_not_their_check_digits() {
        // The INN of the contract's example, and one with a wrong check digit: the
        // service tells that one.
        assert!(inn("7712345671").is_ok() && inn("7712345672").is_ok());
        assert!(inn("500100732259").is_ok());
        for bad in ["77123456", "77123456710", "7712З45671", " 7712345671"] {
            assert!(inn(bad).is_err(), "{bad}");
        }
        assert!(bic("044525987").is_ok() && bic("144525987").is_err());
        assert!(correspondent_account("30101810900000000987").is_ok());
        assert!(correspondent_account("40702810500000012345").is_err());
        assert!(settlement_account("4070281050000001234").is_err());
        assert!(ogrn("304500116000157").is_ok() && ogrn("30450011600015").is_err());
        assert!(kpp("771201001").is_ok() && kpp("77120100").is_err());
        assert!(text("  ").is_err() && text("OOO Romashka").is_ok());
    }

    #[test]
    fn durations_take_units_or_plain_seconds() {
        assert_eq!(duration("90s").unwrap(), Duration::from_secs(90));
        assert_eq!(duration("1m30s").unwrap(), Duration::from_secs(90));
        assert_eq!(duration("2.5").unwrap(), Duration::from_millis(2500));
        assert!(duration("soon").is_err());
        assert!(duration("-1").is_err());
        assert!(duration("inf").is_err());
    }
}
