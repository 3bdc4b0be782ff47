//! The invoice ("Счёт на оплату") and the closing act ("Акт") as PDF.
//!
//! Contract: `GET /v1/billing/invoices/{id}/pdf` and `…/act` answer
//! `application/pdf`. The documents follow the usual Russian forms: the
//! seller's bank block, the parties with their requisites, a table of the
//! invoice's lines, totals with the VAT included at the rate in force on the
//! document's date, the amount in words and lines for signatures.
//!
//! Text is set in DejaVu Sans (see `assets/fonts/README.md`), embedded whole as
//! a CIDFontType2 addressed by glyph id (`Identity-H`), with a `ToUnicode` map
//! so that viewers can search and copy the text, Cyrillic included. The layout
//! is a small cursor that wraps text to column widths and starts a new page
//! when a block does not fit; every piece of caller text is wrapped and capped
//! to a number of lines, so no input can run off a page or loop forever.

use chrono::{DateTime, Utc};

use crate::domain::billing::{document_date as local_date, vat_included, vat_percent};
use crate::domain::requisites::Requisites;

mod font;
mod layout;
mod words;

use layout::{BODY, SMALL, Writer};
use words::{date_text, money_rub};

/// An invoice and its buyer, as both documents print them.
#[derive(Debug, Clone, Copy)]
pub struct InvoiceDoc<'a> {
    pub number: &'a str,
    pub issued_at: DateTime<Utc>,
    pub due_at: DateTime<Utc>,
    /// Set once paid; the act is dated by it.
    pub paid_at: Option<DateTime<Utc>>,
    pub buyer: &'a Requisites,
    pub lines: &'a [Line],
    /// VAT included, at the rate in force on each document's date.
    pub total_kopecks: i64,
}

/// The VAT line of a document dated `day` for `total_kopecks`: its label with
/// the rate, and the VAT within the total.
fn vat_line(day: chrono::NaiveDate, total_kopecks: i64) -> (String, i64) {
    let rate = vat_percent(day);
    (
        format!("В том числе НДС ({rate}%):"),
        vat_included(crate::domain::money::Kopecks(total_kopecks), rate).0,
    )
}

/// A line of an invoice; prices and amounts include VAT.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    pub description: String,
    pub quantity: f64,
    pub unit: String,
    pub unit_price_kopecks: i64,
    pub amount_kopecks: i64,
}

/// The seller: the service's own legal entity, printed on every document.
///
/// Made up, with check digits that hold (INN 7704812347: weights
/// 2 4 10 3 5 9 4 6 8 on 770481234 sum to 161, 161 mod 11 = 7; OGRN
/// 1247700123450: 124770012345 mod 11 = 0; the accounts' keys against BIC
/// 044525987, the bank of the contract's examples), so that a client that
/// validates requisites accepts them too.
pub fn seller() -> Requisites {
    Requisites {
        legal_name: "ООО «Медиаген»".to_owned(),
        inn: "7704812347".to_owned(),
        kpp: Some("770401001".to_owned()),
        ogrn: "1247700123450".to_owned(),
        legal_address: "119021, г. Москва, ул. Примерная, д. 1, офис 101".to_owned(),
        postal_address: None,
        bank_name: "АО «Пример Банк», г. Москва".to_owned(),
        bic: "044525987".to_owned(),
        settlement_account: "40702810600000004321".to_owned(),
        correspondent_account: "30101810900000000987".to_owned(),
        email: Some("billing@mediagen.example".to_owned()),
    }
}

pub(super) const SELLER_DIRECTOR: &str = "Иванов И. И.";
pub(super) const SELLER_ACCOUNTANT: &str = "Петрова А. С.";

/// The invoice: bank block, parties, lines, totals, amount in words, signatures.
pub fn invoice_pdf(doc: &InvoiceDoc) -> Vec<u8> {
    let seller = seller();
    let issued = local_date(doc.issued_at);
    let title = format!("Счёт на оплату № {} от {}", doc.number, date_text(issued));
    let mut w = Writer::new();

    w.bank_block(&seller);
    w.gap(14.0);
    w.title(&title);
    w.party("Поставщик (Исполнитель):", &party_text(&seller, false));
    w.party("Покупатель (Заказчик):", &party_text(doc.buyer, false));
    w.party(
        "Основание:",
        "Публичная оферта ООО «Медиаген» на оказание услуг генерации медиа",
    );
    w.party("Оплатить до:", &date_text(local_date(doc.due_at)));
    w.gap(6.0);
    w.lines_table(doc.lines, "Товары (работы, услуги)");
    let (vat_label, vat) = vat_line(issued, doc.total_kopecks);
    w.totals(&[
        ("Итого:", doc.total_kopecks),
        (&vat_label, vat),
        ("Всего к оплате:", doc.total_kopecks),
    ]);
    w.summary(
        &format!(
            "Всего наименований {}, на сумму {}",
            doc.lines.len(),
            money_rub(doc.total_kopecks)
        ),
        doc.total_kopecks,
    );
    if let Some(paid_at) = doc.paid_at {
        w.paragraph(
            &format!("Оплачен {}", date_text(local_date(paid_at))),
            BODY,
            true,
            2,
        );
    }
    w.paragraph(
        &format!(
            "Оплата этого счёта означает согласие с условиями оферты. \
             Счёт действителен до {} включительно. В назначении платежа укажите: «Оплата по счёту № {}, \
             в т. ч. НДС {}%». Сумма зачисляется на баланс после поступления платежа.",
            date_text(local_date(doc.due_at)),
            doc.number,
            vat_percent(issued)
        ),
        SMALL,
        false,
        8,
    );
    w.rule(1.2);
    w.gap(10.0);
    w.invoice_signatures();

    w.finish(&title, doc.issued_at)
}

/// The closing act: services rendered under the invoice, both parties with
/// their requisites, and the lines both sign.
pub fn act_pdf(doc: &InvoiceDoc) -> Vec<u8> {
    let seller = seller();
    // The act is drawn up when the service (the prepaid balance) is provided,
    // which for a prepayment is the day the money arrives.
    let dated = local_date(doc.paid_at.unwrap_or(doc.issued_at));
    let title = format!("Акт № {} от {}", doc.number, date_text(dated));
    let mut w = Writer::new();

    w.title(&title);
    w.party("Исполнитель:", &party_text(&seller, true));
    w.party("Заказчик:", &party_text(doc.buyer, true));
    w.party(
        "Основание:",
        &format!(
            "Счёт на оплату № {} от {}",
            doc.number,
            date_text(local_date(doc.issued_at))
        ),
    );
    w.gap(6.0);
    w.lines_table(doc.lines, "Наименование работ, услуг");
    let (vat_label, vat) = vat_line(dated, doc.total_kopecks);
    w.totals(&[("Итого:", doc.total_kopecks), (&vat_label, vat)]);
    w.summary(
        &format!(
            "Всего оказано услуг {}, на сумму {}",
            doc.lines.len(),
            money_rub(doc.total_kopecks)
        ),
        doc.total_kopecks,
    );
    w.paragraph(
        "Вышеперечисленные услуги выполнены полностью и в срок. \
         Заказчик претензий по объёму, качеству и срокам оказания услуг не имеет.",
        BODY,
        false,
        4,
    );
    w.rule(1.2);
    w.gap(10.0);
    w.act_signatures(&seller, doc.buyer);

    w.finish(&title, doc.issued_at)
}

// ---------------------------------------------------------------------------
// Text of the documents

/// A party as one paragraph: name, INN and KPP, address and, on the act, the
/// bank details too. A sole proprietor has no KPP.
fn party_text(r: &Requisites, with_bank: bool) -> String {
    let mut text = format!("{}, ИНН {}", r.legal_name.trim(), r.inn);
    if let Some(kpp) = &r.kpp
        && !r.is_sole_proprietor()
    {
        text.push_str(&format!(", КПП {kpp}"));
    }
    let ogrn = if r.is_sole_proprietor() {
        "ОГРНИП"
    } else {
        "ОГРН"
    };
    text.push_str(&format!(", {ogrn} {}, {}", r.ogrn, r.legal_address.trim()));
    if with_bank {
        text.push_str(&format!(
            ", р/с {} в {}, БИК {}, к/с {}",
            r.settlement_account,
            r.bank_name.trim(),
            r.bic,
            r.correspondent_account
        ));
    }
    text
}

// Sums in kopecks are written roubles_kopecks (`25_000_00` is 25 000,00 ₽),
// which reads better here than the grouping by threes that clippy expects.
#[cfg(test)]
#[allow(clippy::inconsistent_digit_grouping)]
mod tests {
    use chrono::TimeZone;

    use super::font::{FONT, wrap};
    use super::words::{amount_in_words, money, quantity_text};
    use super::*;
    use crate::domain::requisites;

    fn buyer() -> Requisites {
        Requisites {
            legal_name: "ООО «Ромашка Медиа»".to_owned(),
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

    fn prepayment(kopecks: i64) -> Vec<Line> {
        vec![Line {
            description: "Предоплата услуг генерации медиа с помощью ИИ".to_owned(),
            quantity: 1.0,
            unit: "усл.".to_owned(),
            unit_price_kopecks: kopecks,
            amount_kopecks: kopecks,
        }]
    }

    fn at(y: i32, m: u32, d: u32, h: u32, min: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(y, m, d, h, min, 0)
            .single()
            .unwrap_or_default()
    }

    fn with_doc<T>(buyer: &Requisites, lines: &[Line], f: impl FnOnce(&InvoiceDoc) -> T) -> T {
        let total: i64 = lines.iter().map(|l| l.amount_kopecks).sum();
        f(&InvoiceDoc {
            number: "MG-2026-000123",
            issued_at: at(2026, 11, 10, 9, 0),
            due_at: at(2026, 11, 17, 20, 59),
            paid_at: Some(at(2026, 11, 12, 13, 45)),
            buyer,
            lines,
            total_kopecks: total,
        })
    }

    /// The text of every page as an independent reader extracts it (lopdf
    /// decodes the glyphs through the `ToUnicode` map), spaces removed: a
    /// reader may split a run at any glyph, and no-break spaces come out as
    /// they are.
    fn extracted_text(pdf: &[u8]) -> String {
        let document = lopdf::Document::load_mem(pdf).unwrap_or_else(|err| panic!("parse: {err}"));
        let pages: Vec<u32> = document.get_pages().keys().copied().collect();
        assert!(!pages.is_empty());
        let text = document
            .extract_text(&pages)
            .unwrap_or_else(|err| panic!("extract: {err}"));
        text.chars().filter(|c| !c.is_whitespace()).collect()
    }

    fn squeezed(text: &str) -> String {
        text.chars().filter(|c| !c.is_whitespace()).collect()
    }

    fn page_count(pdf: &[u8]) -> usize {
        lopdf::Document::load_mem(pdf)
            .map(|d| d.get_pages().len())
            .unwrap_or(0)
    }

    #[test]
    fn both_documents_are_complete_pdf_files() {
        let b = buyer();
        let lines = prepayment(25_000_00);
        for pdf in with_doc(&b, &lines, |d| [invoice_pdf(d), act_pdf(d)]) {
            assert!(pdf.starts_with(b"%PDF-"));
            assert!(pdf.ends_with(b"%%EOF"));
            assert_eq!(page_count(&pdf), 1);
            // The font is embedded once, compressed.
            assert!(pdf.len() < 40_000, "{} bytes", pdf.len());
        }
    }

    #[test]
    fn the_invoice_text_carries_the_number_the_parties_and_the_sums() {
        let b = buyer();
        let lines = prepayment(25_000_00);
        let text = extracted_text(&with_doc(&b, &lines, invoice_pdf));
        for expected in [
            "Счёт на оплату № MG-2026-000123 от 10 ноября 2026 г.",
            "ИНН 7707083893",
            "КПП 773601001",
            "ООО «Ромашка Медиа»",
            "ООО «Медиаген»",
            "ИНН 7704812347",
            "044525987",
            "40702810600000004321",
            "30101810900000000987",
            "Предоплата услуг генерации медиа",
            "25 000,00",
            // 22% from 1 January 2026: 25 000 × 22 / 122.
            "4 508,20",
            "В том числе НДС (22%):",
            "в т. ч. НДС 22%",
            "Двадцать пять тысяч рублей 00 копеек",
            "Оплатить до: 17 ноября 2026 г.",
            "Оплачен 12 ноября 2026 г.",
            "Руководитель",
        ] {
            assert!(
                text.contains(&squeezed(expected)),
                "{expected:?} not in {text}"
            );
        }
    }

    #[test]
    fn the_act_text_carries_both_parties_the_basis_and_the_sums() {
        let b = buyer();
        let lines = prepayment(10_000_00);
        let text = extracted_text(&with_doc(&b, &lines, act_pdf));
        for expected in [
            // Dated by the payment.
            "Акт № MG-2026-000123 от 12 ноября 2026 г.",
            "Исполнитель:",
            "Заказчик:",
            "ИНН 7707083893",
            "р/с 40702810200000012345",
            "Счёт на оплату № MG-2026-000123 от 10 ноября 2026 г.",
            "10 000,00",
            "1 803,28",
            "В том числе НДС (22%):",
            "Десять тысяч рублей 00 копеек",
            "претензий по объёму, качеству и срокам",
            "ИСПОЛНИТЕЛЬ",
            "ЗАКАЗЧИК",
        ] {
            assert!(
                text.contains(&squeezed(expected)),
                "{expected:?} not in {text}"
            );
        }
    }

    #[test]
    fn each_document_states_the_vat_rate_in_force_on_its_own_date() {
        let b = buyer();
        let lines = prepayment(12_000_00);
        // Issued on the last day of 2025 (Moscow time), paid in 2026.
        let doc = InvoiceDoc {
            number: "MG-2025-000999",
            issued_at: at(2025, 12, 31, 12, 0),
            due_at: at(2026, 1, 5, 20, 59),
            paid_at: Some(at(2025, 12, 31, 21, 30)),
            buyer: &b,
            lines: &lines,
            total_kopecks: 12_000_00,
        };
        let invoice = extracted_text(&invoice_pdf(&doc));
        for expected in ["В том числе НДС (20%):", "2 000,00", "в т. ч. НДС 20%"]
        {
            assert!(
                invoice.contains(&squeezed(expected)),
                "{expected:?} not in {invoice}"
            );
        }
        // 21:30 UTC on 31 December is 00:30 on 1 January in Moscow.
        let act = extracted_text(&act_pdf(&doc));
        for expected in ["от 1 января 2026 г.", "В том числе НДС (22%):", "2 163,93"]
        {
            assert!(
                act.contains(&squeezed(expected)),
                "{expected:?} not in {act}"
            );
        }
    }

    #[test]
    fn a_sole_proprietor_is_printed_with_ogrnip_and_without_kpp() {
        let b = Requisites {
            legal_name: "ИП Иванов Иван Иванович".to_owned(),
            inn: "500100732259".to_owned(),
            kpp: None,
            ogrn: "304500116000157".to_owned(),
            ..buyer()
        };
        let lines = prepayment(1_000_00);
        let text = extracted_text(&with_doc(&b, &lines, act_pdf));
        assert!(text.contains(&squeezed("ИНН 500100732259, ОГРНИП 304500116000157")));
        assert!(text.contains(&squeezed("Иванов Иван Иванович")));
    }

    #[test]
    fn the_seller_passes_the_requisites_rules() {
        assert_eq!(requisites::validate(&seller()), vec![]);
    }

    #[test]
    fn the_committed_font_has_cyrillic_and_the_rouble_sign() {
        for c in "АБВГДЕЁЖЗИЙКЛМНОПРСТУФХЦЧШЩЪЫЬЭЮЯабвгдеёжзийклмнопрстуфхцчшщъыьэюя№«»—₽".chars()
        {
            assert_ne!(FONT.glyph(c), FONT.fallback, "{c}");
        }
        assert!(FONT.advance(FONT.glyph('Ж')) > 0.0);
    }

    #[test]
    fn characters_the_font_lacks_are_drawn_as_question_marks() {
        let b = Requisites {
            legal_name: "ООО «漢字 🙂»".to_owned(),
            ..buyer()
        };
        let lines = prepayment(1_000_00);
        let text = extracted_text(&with_doc(&b, &lines, invoice_pdf));
        assert!(text.contains("ООО«???»"), "{text}");
    }

    #[test]
    fn many_lines_run_onto_further_pages_with_page_numbers() {
        let b = buyer();
        let lines: Vec<Line> = (0..120)
            .map(|i| Line {
                description: format!("Генерация изображения № {i}"),
                quantity: 2.5,
                unit: "шт.".to_owned(),
                unit_price_kopecks: 100_00,
                amount_kopecks: 250_00,
            })
            .collect();
        let pdf = with_doc(&b, &lines, invoice_pdf);
        let pages = page_count(&pdf);
        assert!(pages >= 3, "{pages} pages");
        let text = extracted_text(&pdf);
        assert!(text.contains(&squeezed(&format!("Страница {pages} из {pages}"))));
        assert!(text.contains("Генерацияизображения№119"));
        assert!(text.contains("2,5"));
    }

    #[test]
    fn hostile_input_does_not_panic_and_still_makes_a_pdf() {
        let long = "Ы".repeat(100_000);
        let b = Requisites {
            legal_name: format!("{long} {}", "слово ".repeat(5_000)),
            legal_address: "\n\t\r\u{0}".to_owned(),
            inn: String::new(),
            kpp: Some(long.clone()),
            ..buyer()
        };
        let lines = vec![
            Line {
                description: long.clone(),
                quantity: f64::NAN,
                unit: String::new(),
                unit_price_kopecks: i64::MAX,
                amount_kopecks: i64::MIN,
            },
            Line {
                description: String::new(),
                quantity: 1e300,
                unit: long,
                unit_price_kopecks: 0,
                amount_kopecks: -1,
            },
        ];
        let doc = InvoiceDoc {
            number: "",
            issued_at: DateTime::<Utc>::MAX_UTC,
            due_at: DateTime::<Utc>::MIN_UTC,
            paid_at: Some(DateTime::<Utc>::MAX_UTC),
            buyer: &b,
            lines: &lines,
            total_kopecks: i64::MIN,
        };
        for pdf in [invoice_pdf(&doc), act_pdf(&doc)] {
            assert!(pdf.starts_with(b"%PDF-") && pdf.ends_with(b"%%EOF"));
            assert!(page_count(&pdf) >= 1);
        }
        let empty = InvoiceDoc { lines: &[], ..doc };
        assert!(invoice_pdf(&empty).ends_with(b"%%EOF"));
    }

    #[test]
    fn money_groups_thousands_and_uses_a_decimal_comma() {
        assert_eq!(money(123_450), "1\u{a0}234,50");
        assert_eq!(money(5), "0,05");
        assert_eq!(money(100_000_000_00), "100\u{a0}000\u{a0}000,00");
        assert_eq!(money(-1_000_00), "-1\u{a0}000,00");
        assert_eq!(
            money(i64::MIN),
            "-92\u{a0}233\u{a0}720\u{a0}368\u{a0}547\u{a0}758,08"
        );
        assert_eq!(money_rub(25_000_00), "25\u{a0}000,00\u{a0}руб.");
    }

    #[test]
    fn quantities_print_whole_numbers_bare() {
        assert_eq!(quantity_text(1.0), "1");
        assert_eq!(quantity_text(2.5), "2,5");
        assert_eq!(quantity_text(0.125), "0,125");
        assert_eq!(quantity_text(f64::INFINITY), "—");
    }

    #[test]
    fn amounts_read_in_russian_words_with_agreeing_nouns() {
        for (kopecks, words) in [
            (0, "Ноль рублей 00 копеек"),
            (1_01, "Один рубль 01 копейка"),
            (2_02, "Два рубля 02 копейки"),
            (11_11, "Одиннадцать рублей 11 копеек"),
            (21_21, "Двадцать один рубль 21 копейка"),
            (112_05, "Сто двенадцать рублей 05 копеек"),
            (1_000_00, "Одна тысяча рублей 00 копеек"),
            (2_000_00, "Две тысячи рублей 00 копеек"),
            (
                4_166_67,
                "Четыре тысячи сто шестьдесят шесть рублей 67 копеек",
            ),
            (25_000_00, "Двадцать пять тысяч рублей 00 копеек"),
            (
                1_021_001_00,
                "Один миллион двадцать одна тысяча один рубль 00 копеек",
            ),
            (10_000_000_00, "Десять миллионов рублей 00 копеек"),
            (-5_00, "Минус пять рублей 00 копеек"),
        ] {
            assert_eq!(amount_in_words(kopecks), words);
        }
        assert!(amount_in_words(i64::MAX).starts_with("Девяносто два квадриллиона"));
        assert!(amount_in_words(i64::MIN).starts_with("Минус девяносто два квадриллиона"));
    }

    #[test]
    fn dates_are_moscow_days() {
        // 20:59:59Z is 23:59:59 in Moscow, 21:00Z is already the next day.
        assert_eq!(
            date_text(local_date(at(2026, 11, 27, 20, 59))),
            "27 ноября 2026 г."
        );
        assert_eq!(
            date_text(local_date(at(2026, 11, 27, 21, 0))),
            "28 ноября 2026 г."
        );
    }

    #[test]
    fn wrapping_fits_the_width_and_marks_what_it_left_out() {
        let lines = wrap("раз два три четыре пять шесть семь восемь", BODY, 60.0, 3);
        assert_eq!(lines.len(), 3);
        assert!(
            lines.iter().all(|l| FONT.width(l, BODY) <= 60.0),
            "{lines:?}"
        );
        assert!(lines[2].ends_with('…'));
        let one_word = wrap(&"Щ".repeat(50), BODY, 30.0, 100);
        assert!(one_word.len() > 1 && one_word.iter().all(|l| FONT.width(l, BODY) <= 30.0));
        // A column narrower than one character still makes progress.
        assert_eq!(wrap("ЩЩЩ", BODY, 1.0, 10).len(), 3);
        assert!(wrap("", BODY, 100.0, 3).is_empty());
    }

    /// Poppler, when installed, reads the same text: the documents are for
    /// people, whose viewers are not lopdf.
    #[test]
    fn poppler_extracts_the_same_text_when_installed() {
        use std::process::Command;
        let b = buyer();
        let lines = prepayment(25_000_00);
        let pdf = with_doc(&b, &lines, invoice_pdf);
        let dir = std::env::temp_dir().join(format!("mediagen-documents-{}", std::process::id()));
        if std::fs::create_dir_all(&dir).is_err() {
            return;
        }
        let path = dir.join("invoice.pdf");
        if std::fs::write(&path, &pdf).is_err() {
            return;
        }
        let output = Command::new("pdftotext").arg(&path).arg("-").output();
        let _ = std::fs::remove_dir_all(&dir);
        let Ok(output) = output else {
            eprintln!("pdftotext is not installed; skipped");
            return;
        };
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let text = squeezed(&String::from_utf8_lossy(&output.stdout));
        assert!(
            text.contains(&squeezed("Счёт на оплату № MG-2026-000123")),
            "{text}"
        );
        assert!(text.contains("7707083893"), "{text}");
    }
}
