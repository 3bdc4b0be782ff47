//! Requisites of a Russian legal entity: the formats and check digits of its
//! registration and bank numbers.
//!
//! Contract, `RequisitesInput`: "A failed format or check digit gives 400
//! VALIDATION_ERROR with `details.fields[]` (keyword `checksum` for check
//! digits); a 10-digit INN without `kpp` gives keyword `required` at `/kpp`."
//! The field errors speak Ajv's dialect like the rest of
//! [`contract`](crate::contract): format failures carry the contract's own
//! `pattern`, so a client sees the same error whether the schema or this module
//! caught it.
//!
//! The check-digit algorithms are those of the Federal Tax Service (INN, OGRN,
//! OGRNIP) and of the Bank of Russia (the control key of an account, Bank of
//! Russia regulation No. 579-P, appendix on the calculation of the key).

use serde_json::{Value, json};

use crate::contract::FieldError;

/// The most characters a name or an address may have: enough for any real
/// legal name, and bounded so that a document stays a document.
pub const MAX_TEXT_CHARS: usize = 512;

/// The most characters of an e-mail address (RFC 5321's limit on a path).
const MAX_EMAIL_CHARS: usize = 254;

// The contract's patterns, quoted in the errors' `params` and messages.
const INN_PATTERN: &str = r"^(\d{10}|\d{12})$";
const KPP_PATTERN: &str = r"^\d{9}$";
const OGRN_PATTERN: &str = r"^(\d{13}|\d{15})$";
const BIC_PATTERN: &str = r"^04\d{7}$";
const ACCOUNT_PATTERN: &str = r"^\d{20}$";
const CORRESPONDENT_PATTERN: &str = r"^301\d{17}$";

/// The requisites of the legal entity an invoice is made out to, as
/// `RequisitesInput` carries them (the stored `Requisites` adds `updatedAt`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Requisites {
    pub legal_name: String,
    /// 10 digits for an organisation, 12 for a sole proprietor.
    pub inn: String,
    /// Organisations only.
    pub kpp: Option<String>,
    /// OGRN (13 digits) or, for a sole proprietor, OGRNIP (15).
    pub ogrn: String,
    pub legal_address: String,
    pub postal_address: Option<String>,
    pub bank_name: String,
    pub bic: String,
    pub settlement_account: String,
    pub correspondent_account: String,
    pub email: Option<String>,
}

impl Requisites {
    /// The same requisites with the surrounding whitespace of names, addresses
    /// and the e-mail removed, and a blank postal address taken as none.
    ///
    /// [`validate`] judges text fields as they will be after this, so a route
    /// stores `normalized()` and both agree; the numbers are left alone, since
    /// a stray space in an INN is more likely a paste of the wrong thing.
    pub fn normalized(mut self) -> Self {
        for text in [
            &mut self.legal_name,
            &mut self.legal_address,
            &mut self.bank_name,
        ] {
            trim_in_place(text);
        }
        if let Some(email) = &mut self.email {
            trim_in_place(email);
        }
        self.postal_address = self
            .postal_address
            .map(|address| address.trim().to_owned())
            .filter(|address| !address.is_empty());
        self
    }

    /// Whether the INN is that of a sole proprietor (12 digits), who has no
    /// KPP and signs documents in person.
    pub fn is_sole_proprietor(&self) -> bool {
        self.inn.len() == 12
    }
}

fn trim_in_place(text: &mut String) {
    let trimmed = text.trim();
    if trimmed.len() != text.len() {
        *text = trimmed.to_owned();
    }
}

/// Every violation, in field order; empty when valid.
///
/// A number with the wrong format gets a `pattern` error and no `checksum`
/// error; an account is checked against the BIC only when the BIC itself has
/// the right format.
pub fn validate(r: &Requisites) -> Vec<FieldError> {
    let mut errors = Vec::new();

    check_text(&mut errors, "/legalName", &r.legal_name);

    let inn_ok = check_pattern(&mut errors, "/inn", &r.inn, INN_PATTERN, |s| {
        is_digits(s, 10) || is_digits(s, 12)
    });
    if inn_ok && !inn_is_valid(&r.inn) {
        errors.push(checksum("/inn", "INN"));
    }

    match &r.kpp {
        // Contract, `kpp`: "null for sole proprietors". A KPP beside a
        // 12-digit INN is refused rather than dropped: it means the caller
        // mixed up two entities, and the documents would print it.
        Some(_) if inn_ok && r.inn.len() == 12 => errors.push(FieldError {
            path: "/kpp".to_owned(),
            keyword: "type".to_owned(),
            message: "must be null".to_owned(),
            params: json!({ "type": "null" }),
        }),
        Some(kpp) => {
            check_pattern(&mut errors, "/kpp", kpp, KPP_PATTERN, |s| is_digits(s, 9));
        }
        None if inn_ok && r.inn.len() == 10 => errors.push(FieldError {
            path: "/kpp".to_owned(),
            keyword: "required".to_owned(),
            message: "must have required property 'kpp'".to_owned(),
            params: json!({ "missingProperty": "kpp" }),
        }),
        None => {}
    }

    let ogrn_ok = check_pattern(&mut errors, "/ogrn", &r.ogrn, OGRN_PATTERN, |s| {
        is_digits(s, 13) || is_digits(s, 15)
    });
    if ogrn_ok && !ogrn_is_valid(&r.ogrn) {
        errors.push(checksum("/ogrn", "OGRN"));
    }

    check_text(&mut errors, "/legalAddress", &r.legal_address);
    if let Some(address) = &r.postal_address {
        // Blank means "same as the legal address" (see `normalized`).
        if !address.trim().is_empty() {
            check_text(&mut errors, "/postalAddress", address);
        }
    }
    check_text(&mut errors, "/bankName", &r.bank_name);

    let bic_ok = check_pattern(&mut errors, "/bic", &r.bic, BIC_PATTERN, |s| {
        is_digits(s, 9) && s.starts_with("04")
    });

    let settlement_ok = check_pattern(
        &mut errors,
        "/settlementAccount",
        &r.settlement_account,
        ACCOUNT_PATTERN,
        |s| is_digits(s, 20),
    );
    if bic_ok && settlement_ok && !account_is_valid(&r.bic, &r.settlement_account) {
        errors.push(checksum("/settlementAccount", "account control key"));
    }

    let correspondent_ok = check_pattern(
        &mut errors,
        "/correspondentAccount",
        &r.correspondent_account,
        CORRESPONDENT_PATTERN,
        |s| is_digits(s, 20) && s.starts_with("301"),
    );
    if bic_ok
        && correspondent_ok
        && !correspondent_account_is_valid(&r.bic, &r.correspondent_account)
    {
        errors.push(checksum("/correspondentAccount", "account control key"));
    }

    if let Some(email) = &r.email
        && !email_is_plausible(email.trim())
    {
        errors.push(FieldError {
            path: "/email".to_owned(),
            keyword: "format".to_owned(),
            message: "must match format \"email\"".to_owned(),
            params: json!({ "format": "email" }),
        });
    }

    errors
}

/// The INN's check digits: one for an organisation (10 digits), two for a
/// person or sole proprietor (12 digits), each the weighted sum of the digits
/// before it mod 11 mod 10.
pub fn inn_is_valid(inn: &str) -> bool {
    const W10: [u32; 9] = [2, 4, 10, 3, 5, 9, 4, 6, 8];
    const W11: [u32; 10] = [7, 2, 4, 10, 3, 5, 9, 4, 6, 8];
    const W12: [u32; 11] = [3, 7, 2, 4, 10, 3, 5, 9, 4, 6, 8];
    let Some(d) = digits(inn) else {
        return false;
    };
    let check = |weights: &[u32]| weighted_sum(&d, weights) % 11 % 10;
    match d.len() {
        10 => check(&W10) == d[9],
        12 => check(&W11) == d[10] && check(&W12) == d[11],
        _ => false,
    }
}

/// The OGRN's check digit: the number made by the first 12 digits mod 11,
/// mod 10; for a sole proprietor's OGRNIP the first 14 digits mod 13, mod 10.
pub fn ogrn_is_valid(ogrn: &str) -> bool {
    let (body, modulus) = match ogrn.len() {
        13 => (12, 11),
        15 => (14, 13),
        _ => return false,
    };
    let Some(d) = digits(ogrn) else {
        return false;
    };
    // At most 14 digits, so the number fits a u64 with room to spare.
    let number = d[..body]
        .iter()
        .fold(0u64, |n, &digit| n * 10 + u64::from(digit));
    number % modulus % 10 == u64::from(d[body])
}

/// The control key of a settlement account at a bank's branch: the last three
/// digits of the BIC followed by the 20 digits of the account, weighted
/// 7, 1, 3 repeating, sum to a multiple of 10.
pub fn account_is_valid(bic: &str, account: &str) -> bool {
    if !is_digits(bic, 9) || !is_digits(account, 20) {
        return false;
    }
    control_key_holds(&format!("{}{account}", &bic[6..]))
}

/// The control key of a bank's correspondent account at the Bank of Russia:
/// "0" and the 5th and 6th digits of the BIC (the settlement network's
/// division) followed by the account, weighted 7, 1, 3 repeating; such
/// accounts are all on balance account 301.
pub fn correspondent_account_is_valid(bic: &str, account: &str) -> bool {
    if !is_digits(bic, 9) || !is_digits(account, 20) || !account.starts_with("301") {
        return false;
    }
    control_key_holds(&format!("0{}{account}", &bic[4..6]))
}

fn control_key_holds(key_digits: &str) -> bool {
    const WEIGHTS: [u32; 3] = [7, 1, 3];
    digits(key_digits).is_some_and(|d| {
        let sum: u32 = d
            .iter()
            .zip(WEIGHTS.iter().cycle())
            .map(|(d, w)| d * w)
            .sum();
        sum.is_multiple_of(10)
    })
}

fn weighted_sum(digits: &[u32], weights: &[u32]) -> u32 {
    digits.iter().zip(weights).map(|(d, w)| d * w).sum()
}

/// The decimal digits of `s`, or `None` if anything else is in it.
fn digits(s: &str) -> Option<Vec<u32>> {
    s.chars().map(|c| c.to_digit(10)).collect()
}

/// Exactly `len` ASCII digits, so that byte offsets into `s` are digit offsets.
fn is_digits(s: &str, len: usize) -> bool {
    s.len() == len && s.bytes().all(|b| b.is_ascii_digit())
}

/// A name or an address: not blank once trimmed, at most [`MAX_TEXT_CHARS`]
/// characters (counted like Ajv, in code points).
fn check_text(errors: &mut Vec<FieldError>, path: &str, value: &str) {
    let chars = value.trim().chars().count();
    if chars == 0 {
        errors.push(FieldError {
            path: path.to_owned(),
            keyword: "minLength".to_owned(),
            message: "must NOT have fewer than 1 characters".to_owned(),
            params: json!({ "limit": 1 }),
        });
    } else if chars > MAX_TEXT_CHARS {
        errors.push(FieldError {
            path: path.to_owned(),
            keyword: "maxLength".to_owned(),
            message: format!("must NOT have more than {MAX_TEXT_CHARS} characters"),
            params: json!({ "limit": MAX_TEXT_CHARS }),
        });
    }
}

/// Pushes Ajv's `pattern` error unless `matches`; returns whether it matched.
fn check_pattern(
    errors: &mut Vec<FieldError>,
    path: &str,
    value: &str,
    pattern: &str,
    matches: impl Fn(&str) -> bool,
) -> bool {
    let ok = matches(value);
    if !ok {
        errors.push(FieldError {
            path: path.to_owned(),
            keyword: "pattern".to_owned(),
            message: format!("must match pattern \"{pattern}\""),
            params: json!({ "pattern": pattern }),
        });
    }
    ok
}

fn checksum(path: &str, what: &str) -> FieldError {
    FieldError {
        path: path.to_owned(),
        keyword: "checksum".to_owned(),
        message: format!("{what} check digit does not match"),
        params: Value::Object(Default::default()),
    }
}

/// One `@` with something before it, and a domain of at least two non-empty
/// labels; no spaces or control characters. Deliverability is the mail
/// server's business.
fn email_is_plausible(email: &str) -> bool {
    let Some((local, domain)) = email.split_once('@') else {
        return false;
    };
    !local.is_empty()
        && !domain.contains('@')
        && email.chars().count() <= MAX_EMAIL_CHARS
        && !email.chars().any(|c| c.is_whitespace() || c.is_control())
        && domain.contains('.')
        && domain.split('.').all(|label| !label.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    // Sberbank's published requisites (ПАО Сбербанк, its charter and every
    // payment order made out to it), checked here by hand:
    //
    // INN 7707083893, weights 2 4 10 3 5 9 4 6 8 on 7 7 0 7 0 8 3 8 9:
    //   14 + 28 + 0 + 21 + 0 + 72 + 12 + 48 + 72 = 267; 267 mod 11 = 3 → "3" ✓
    // OGRN 1027700132195: 102770013219 = 11 × 9342728474 + 5 → "5" ✓
    // BIC 044525225, correspondent account 30101810400000000225:
    //   "0" + "25" + account = 0 2 5 3 0 1 0 1 8 1 0 4 0 0 0 0 0 0 0 0 2 2 5,
    //   weights 7 1 3 …: 0+2+15+21+0+3+0+1+24+7+0+12+0…0+6+14+5 = 110 ✓
    // Settlement account 407028102 00000012345 (made up; key digit derived):
    //   "225" + 40702810K00000012345 with K (weight 3) unknown gives
    //   14+2+15+28+0+21+0+2+24+7+0+3K+0…0+7+2+9+28+5 = 164 + 3K,
    //   so 3K ≡ 6 (mod 10) and K = 2.
    fn sberbank() -> Requisites {
        Requisites {
            legal_name: "ПАО Сбербанк".to_owned(),
            inn: "7707083893".to_owned(),
            kpp: Some("773601001".to_owned()),
            ogrn: "1027700132195".to_owned(),
            legal_address: "117312, г. Москва, ул. Вавилова, д. 19".to_owned(),
            postal_address: None,
            bank_name: "ПАО Сбербанк".to_owned(),
            bic: "044525225".to_owned(),
            settlement_account: "40702810200000012345".to_owned(),
            correspondent_account: "30101810400000000225".to_owned(),
            email: Some("buh@example.ru".to_owned()),
        }
    }

    // The example sole proprietor of FNS materials and INN validators:
    // INN 500100732259:
    //   11th: weights 7 2 4 10 3 5 9 4 6 8 on 5 0 0 1 0 0 7 3 2 2:
    //     35+0+0+10+0+0+63+12+12+16 = 148; 148 mod 11 = 5 → "5" ✓
    //   12th: weights 3 7 2 4 10 3 5 9 4 6 8 on 5 0 0 1 0 0 7 3 2 2 5:
    //     15+0+0+4+0+0+35+27+8+12+40 = 141; 141 mod 11 = 9 → "9" ✓
    // OGRNIP 304500116000157 (the example in the OGRN's Wikipedia article):
    //   30450011600015 = 13 × 2342308584616 + 7 → "7" ✓
    fn sole_proprietor() -> Requisites {
        Requisites {
            legal_name: "ИП Иванов Иван Иванович".to_owned(),
            inn: "500100732259".to_owned(),
            kpp: None,
            ogrn: "304500116000157".to_owned(),
            ..sberbank()
        }
    }

    fn paths(errors: &[FieldError]) -> Vec<(&str, &str)> {
        errors
            .iter()
            .map(|e| (e.path.as_str(), e.keyword.as_str()))
            .collect()
    }

    /// Every string made by replacing one digit of `s` with another.
    fn single_digit_changes(s: &str) -> impl Iterator<Item = String> + '_ {
        (0..s.len()).flat_map(move |i| {
            let original = s.as_bytes()[i];
            (b'0'..=b'9').filter(move |&d| d != original).map(move |d| {
                let mut bytes = s.as_bytes().to_vec();
                bytes[i] = d;
                String::from_utf8(bytes).unwrap_or_default()
            })
        })
    }

    #[test]
    fn published_organisation_requisites_pass() {
        assert_eq!(validate(&sberbank()), vec![]);
    }

    #[test]
    fn published_sole_proprietor_requisites_pass() {
        assert_eq!(validate(&sole_proprietor()), vec![]);
        assert!(sole_proprietor().is_sole_proprietor());
        assert!(!sberbank().is_sole_proprietor());
    }

    #[test]
    fn check_digit_functions_accept_the_published_numbers() {
        assert!(inn_is_valid("7707083893"));
        assert!(inn_is_valid("500100732259"));
        assert!(ogrn_is_valid("1027700132195"));
        assert!(ogrn_is_valid("304500116000157"));
        assert!(account_is_valid("044525225", "40702810200000012345"));
        assert!(correspondent_account_is_valid(
            "044525225",
            "30101810400000000225"
        ));
    }

    #[test]
    fn every_single_digit_change_of_an_inn_fails() {
        for inn in ["7707083893", "500100732259"] {
            for changed in single_digit_changes(inn) {
                assert!(!inn_is_valid(&changed), "{changed} passed");
            }
        }
    }

    #[test]
    fn every_single_digit_change_of_an_ogrn_fails() {
        // A remainder reduced mod 10 cannot catch every change (remainders 10
        // and 0 both give "0"), but these numbers' remainders are 5 and 7, which
        // only themselves reduce to, so here every change must be caught.
        for ogrn in ["1027700132195", "304500116000157"] {
            for changed in single_digit_changes(ogrn) {
                assert!(!ogrn_is_valid(&changed), "{changed} passed");
            }
        }
    }

    #[test]
    fn every_single_digit_change_of_an_account_fails() {
        for changed in single_digit_changes("40702810200000012345") {
            assert!(!account_is_valid("044525225", &changed), "{changed}");
        }
        for changed in single_digit_changes("30101810400000000225") {
            assert!(
                !correspondent_account_is_valid("044525225", &changed),
                "{changed}"
            );
        }
    }

    #[test]
    fn an_account_is_checked_against_its_own_bank() {
        // The same account number at a bank whose BIC ends in other digits.
        assert!(!account_is_valid("044525226", "40702810200000012345"));
        // And a correspondent account in another division of the network.
        assert!(!correspondent_account_is_valid(
            "044535225",
            "30101810400000000225"
        ));
    }

    #[test]
    fn a_correspondent_account_must_be_on_balance_account_301() {
        // 30201810… would need its own key; build one that holds the key but
        // is not a 301 account: "0"+"25"+"30201810K00000000225", K at weight 3.
        // 0+2+15+21+0+6+0+1+24+7+0+3K+0…0+6+14+5 = 101 + 3K → K = 3.
        assert!(control_key_holds("02530201810300000000225"));
        assert!(!correspondent_account_is_valid(
            "044525225",
            "30201810300000000225"
        ));
    }

    #[test]
    fn wrong_lengths_and_letters_are_refused_by_the_check_functions() {
        for bad in [
            "",
            "770708389",
            "77070838933",
            "77070838Ч3",
            "7707O83893",
            "٧٧٠٧٠٨٣٨٩٣",
        ] {
            assert!(!inn_is_valid(bad), "{bad}");
        }
        assert!(!ogrn_is_valid("102770013219"));
        assert!(!ogrn_is_valid("10277001321950"));
        assert!(!ogrn_is_valid("102770013219x"));
        assert!(!account_is_valid("04452522", "40702810200000012345"));
        assert!(!account_is_valid("044525225", "4070281020000001234"));
        assert!(!account_is_valid("044525225", "4070281020000001234Б"));
        assert!(!correspondent_account_is_valid("044525225", ""));
    }

    #[test]
    fn wrong_formats_give_pattern_errors_with_the_contracts_patterns() {
        let r = Requisites {
            inn: "77070838".to_owned(),
            kpp: Some("7736O1001".to_owned()),
            ogrn: "10277001321".to_owned(),
            bic: "054525225".to_owned(),
            settlement_account: "4070281020000001234".to_owned(),
            correspondent_account: "40101810400000000225".to_owned(),
            ..sberbank()
        };
        let errors = validate(&r);
        assert_eq!(
            paths(&errors),
            vec![
                ("/inn", "pattern"),
                ("/kpp", "pattern"),
                ("/ogrn", "pattern"),
                ("/bic", "pattern"),
                ("/settlementAccount", "pattern"),
                ("/correspondentAccount", "pattern"),
            ]
        );
        assert_eq!(errors[0].params, json!({ "pattern": r"^(\d{10}|\d{12})$" }));
        assert_eq!(
            errors[0].message,
            r#"must match pattern "^(\d{10}|\d{12})$""#
        );
        assert_eq!(errors[3].params, json!({ "pattern": r"^04\d{7}$" }));
    }

    #[test]
    fn wrong_check_digits_give_checksum_errors_in_field_order() {
        let r = Requisites {
            inn: "7707083894".to_owned(),
            ogrn: "1027700132196".to_owned(),
            settlement_account: "40702810300000012345".to_owned(),
            correspondent_account: "30101810500000000225".to_owned(),
            ..sberbank()
        };
        let errors = validate(&r);
        assert_eq!(
            paths(&errors),
            vec![
                ("/inn", "checksum"),
                ("/ogrn", "checksum"),
                ("/settlementAccount", "checksum"),
                ("/correspondentAccount", "checksum"),
            ]
        );
        assert!(errors.iter().all(|e| e.params == json!({})));
    }

    #[test]
    fn accounts_are_not_checked_against_a_malformed_bic() {
        let r = Requisites {
            bic: "04452522".to_owned(),
            settlement_account: "40702810300000012345".to_owned(),
            ..sberbank()
        };
        assert_eq!(paths(&validate(&r)), vec![("/bic", "pattern")]);
    }

    #[test]
    fn a_ten_digit_inn_without_kpp_gives_required_at_kpp() {
        let errors = validate(&Requisites {
            kpp: None,
            ..sberbank()
        });
        assert_eq!(paths(&errors), vec![("/kpp", "required")]);
        assert_eq!(errors[0].params, json!({ "missingProperty": "kpp" }));
        assert_eq!(errors[0].message, "must have required property 'kpp'");
    }

    #[test]
    fn a_kpp_beside_a_twelve_digit_inn_is_refused() {
        let errors = validate(&Requisites {
            kpp: Some("773601001".to_owned()),
            ..sole_proprietor()
        });
        assert_eq!(paths(&errors), vec![("/kpp", "type")]);
        assert_eq!(errors[0].params, json!({ "type": "null" }));
    }

    #[test]
    fn kpp_is_nine_digits_as_the_contract_says() {
        // FNS rules allow capital Latin letters in positions 5-6 of a KPP,
        // but the contract's pattern is `^\d{9}$`, and the stored value is
        // returned under that same schema.
        for bad in ["7736AB001", "77360100", "7736010011", ""] {
            let r = Requisites {
                kpp: Some(bad.to_owned()),
                ..sberbank()
            };
            assert_eq!(paths(&validate(&r)), vec![("/kpp", "pattern")], "{bad}");
        }
    }

    #[test]
    fn a_malformed_inn_does_not_also_demand_a_kpp() {
        let r = Requisites {
            inn: "77070838X3".to_owned(),
            kpp: None,
            ..sberbank()
        };
        assert_eq!(paths(&validate(&r)), vec![("/inn", "pattern")]);
    }

    #[test]
    fn blank_and_overlong_names_and_addresses_are_refused() {
        let long = "Я".repeat(MAX_TEXT_CHARS + 1);
        let r = Requisites {
            legal_name: "   ".to_owned(),
            legal_address: long.clone(),
            postal_address: Some(long),
            bank_name: String::new(),
            ..sberbank()
        };
        let errors = validate(&r);
        assert_eq!(
            paths(&errors),
            vec![
                ("/legalName", "minLength"),
                ("/legalAddress", "maxLength"),
                ("/postalAddress", "maxLength"),
                ("/bankName", "minLength"),
            ]
        );
        assert_eq!(errors[1].params, json!({ "limit": 512 }));
    }

    #[test]
    fn text_at_the_limit_counts_characters_not_bytes() {
        let r = Requisites {
            // 512 two-byte characters inside surrounding spaces.
            legal_name: format!("  {}  ", "Я".repeat(MAX_TEXT_CHARS)),
            ..sberbank()
        };
        assert_eq!(validate(&r), vec![]);
    }

    #[test]
    fn normalized_trims_text_and_drops_a_blank_postal_address() {
        let r = Requisites {
            legal_name: "  ПАО Сбербанк\n".to_owned(),
            postal_address: Some("  ".to_owned()),
            email: Some(" buh@example.ru ".to_owned()),
            ..sberbank()
        };
        assert_eq!(validate(&r), vec![]);
        let n = r.normalized();
        assert_eq!(n.legal_name, "ПАО Сбербанк");
        assert_eq!(n.postal_address, None);
        assert_eq!(n.email.as_deref(), Some("buh@example.ru"));
        assert_eq!(n, sberbank());
    }

    #[test]
    fn implausible_emails_are_refused_and_plausible_ones_pass() {
        for bad in [
            "",
            "buh",
            "buh@",
            "@example.ru",
            "buh@example",
            "buh@@example.ru",
            "b@h@example.ru",
            "buh@example..ru",
            "buh@.ru",
            "buh@example.",
            "b uh@example.ru",
        ] {
            let r = Requisites {
                email: Some(bad.to_owned()),
                ..sberbank()
            };
            assert_eq!(paths(&validate(&r)), vec![("/email", "format")], "{bad:?}");
        }
        for good in [
            "buh@example.ru",
            "first.last+invoices@mail.example.com",
            "бух@пример.рф",
        ] {
            let r = Requisites {
                email: Some(good.to_owned()),
                ..sberbank()
            };
            assert_eq!(validate(&r), vec![], "{good}");
        }
        let none = Requisites {
            email: None,
            ..sberbank()
        };
        assert_eq!(validate(&none), vec![]);
    }

    #[test]
    fn every_violation_is_reported_at_once() {
        let r = Requisites {
            legal_name: String::new(),
            inn: "7707083894".to_owned(),
            kpp: None,
            ogrn: "x".to_owned(),
            legal_address: String::new(),
            postal_address: None,
            bank_name: String::new(),
            bic: "1".to_owned(),
            settlement_account: "2".to_owned(),
            correspondent_account: "3".to_owned(),
            email: Some("4".to_owned()),
        };
        assert_eq!(
            paths(&validate(&r)),
            vec![
                ("/legalName", "minLength"),
                ("/inn", "checksum"),
                ("/kpp", "required"),
                ("/ogrn", "pattern"),
                ("/legalAddress", "minLength"),
                ("/bankName", "minLength"),
                ("/bic", "pattern"),
                ("/settlementAccount", "pattern"),
                ("/correspondentAccount", "pattern"),
                ("/email", "format"),
            ]
        );
    }

    #[test]
    fn deserialises_from_the_contracts_camel_case_with_kpp_and_email_optional() {
        let r: Requisites = serde_json::from_value(json!({
            "legalName": "ИП Иванов Иван Иванович",
            "inn": "500100732259",
            "ogrn": "304500116000157",
            "legalAddress": "117312, г. Москва, ул. Вавилова, д. 19",
            "bankName": "ПАО Сбербанк",
            "bic": "044525225",
            "settlementAccount": "40702810200000012345",
            "correspondentAccount": "30101810400000000225"
        }))
        .unwrap_or_else(|err| panic!("{err}"));
        assert_eq!((r.kpp, r.email, r.postal_address), (None, None, None));
    }

    /// Every `example` and `examples[*].value` of every media type whose
    /// schema is `Requisites` or `RequisitesInput`.
    fn contract_examples() -> Vec<Value> {
        fn walk(v: &Value, found: &mut Vec<Value>) {
            match v {
                Value::Object(map) => {
                    let is_requisites = map
                        .get("schema")
                        .and_then(|s| s.get("$ref"))
                        .and_then(Value::as_str)
                        .is_some_and(|r| {
                            r.ends_with("/Requisites") || r.ends_with("/RequisitesInput")
                        });
                    if is_requisites {
                        found.extend(map.get("example").cloned());
                        if let Some(Value::Object(named)) = map.get("examples") {
                            found.extend(named.values().filter_map(|e| e.get("value").cloned()));
                        }
                    }
                    map.values().for_each(|v| walk(v, found));
                }
                Value::Array(items) => items.iter().for_each(|v| walk(v, found)),
                _ => {}
            }
        }
        let document = mediagen_openapi::document().unwrap_or_else(|err| panic!("{err}"));
        let mut found = Vec::new();
        walk(&document, &mut found);
        for schema in ["Requisites", "RequisitesInput"] {
            if let Some(Value::Array(examples)) =
                document.pointer(&format!("/components/schemas/{schema}/examples"))
            {
                found.extend(examples.iter().cloned());
            }
        }
        found
    }

    #[test]
    fn the_contracts_examples_of_requisites_pass() {
        let examples = contract_examples();
        assert!(examples.len() >= 2, "found {}", examples.len());
        for example in examples {
            let r: Requisites = serde_json::from_value(example.clone())
                .unwrap_or_else(|err| panic!("{err}: {example}"));
            assert_eq!(validate(&r), vec![], "{example}");
        }
    }
}
