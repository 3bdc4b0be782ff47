//! The invoice ("Счёт на оплату") and the closing act ("Акт") as PDF.
//!
//! Contract: `GET /v1/billing/invoices/{id}/pdf` and `…/act` answer
//! `application/pdf`. The documents follow the usual Russian forms: the
//! seller's bank block, the parties with their requisites, a table of the
//! invoice's lines, totals with VAT 20% included, the amount in words and
//! lines for signatures.
//!
//! Text is set in DejaVu Sans (see `assets/fonts/README.md`), embedded whole as
//! a CIDFontType2 addressed by glyph id (`Identity-H`), with a `ToUnicode` map
//! so that viewers can search and copy the text, Cyrillic included. The layout
//! is a small cursor that wraps text to column widths and starts a new page
//! when a block does not fit; every piece of caller text is wrapped and capped
//! to a number of lines, so no input can run off a page or loop forever.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use chrono::{DateTime, Datelike, NaiveDate, NaiveDateTime, TimeDelta, Timelike, Utc};
use pdf_writer::types::{CidFontType, FontFlags, SystemInfo, TextRenderingMode, UnicodeCmap};
use pdf_writer::{Content, Date, Filter, Finish, Name, Pdf, Rect, Ref, Str, TextStr};
use ttf_parser::{Face, GlyphId};

use super::requisites::Requisites;

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
    /// VAT included.
    pub total_kopecks: i64,
    /// The VAT within `total_kopecks`.
    pub vat_kopecks: i64,
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

const SELLER_DIRECTOR: &str = "Иванов И. И.";
const SELLER_ACCOUNTANT: &str = "Петрова А. С.";

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
    w.totals(&[
        ("Итого:", doc.total_kopecks),
        ("В том числе НДС (20%):", doc.vat_kopecks),
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
             в т. ч. НДС 20%». Сумма зачисляется на баланс после поступления платежа.",
            date_text(local_date(doc.due_at)),
            doc.number
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
    w.totals(&[
        ("Итого:", doc.total_kopecks),
        ("В том числе НДС (20%):", doc.vat_kopecks),
    ]);
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

/// Documents are dated in Moscow time, the seller's: the contract's `dueAt`
/// of "…T20:59:59Z" is the end of a Moscow day. Russia has kept UTC+3 all
/// year since 2014.
fn moscow(at: DateTime<Utc>) -> NaiveDateTime {
    let utc = at.naive_utc();
    utc.checked_add_signed(TimeDelta::hours(3)).unwrap_or(utc)
}

fn local_date(at: DateTime<Utc>) -> NaiveDate {
    moscow(at).date()
}

/// "22 ноября 2026 г."
fn date_text(date: NaiveDate) -> String {
    const MONTHS: [&str; 12] = [
        "января",
        "февраля",
        "марта",
        "апреля",
        "мая",
        "июня",
        "июля",
        "августа",
        "сентября",
        "октября",
        "ноября",
        "декабря",
    ];
    let month = MONTHS.get(date.month0() as usize).copied().unwrap_or("");
    format!("{} {month} {} г.", date.day(), date.year())
}

/// "1 234,50": groups of thousands apart by a no-break space, so a number is
/// never split across lines, and a decimal comma.
fn money(kopecks: i64) -> String {
    let abs = kopecks.unsigned_abs();
    let (rub, kop) = (abs / 100, abs % 100);
    let digits = rub.to_string();
    let mut grouped = String::with_capacity(digits.len() * 2);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            grouped.push('\u{a0}');
        }
        grouped.push(c);
    }
    let sign = if kopecks < 0 { "-" } else { "" };
    format!("{sign}{grouped},{kop:02}")
}

/// "1 234,50 руб.", the way accounting documents print sums ("₽" is newer
/// than most of their readers' habits).
fn money_rub(kopecks: i64) -> String {
    format!("{}\u{a0}руб.", money(kopecks))
}

/// A quantity: whole numbers bare, others with up to three decimals and a
/// decimal comma.
fn quantity_text(q: f64) -> String {
    if !q.is_finite() {
        return "—".to_owned();
    }
    if q.fract() == 0.0 && q.abs() < 1e15 {
        return format!("{}", q as i64);
    }
    let text = format!("{q:.3}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    text.replace('.', ",")
}

/// The sum in words, as the line "сумма прописью" asks: "Двадцать пять
/// тысяч рублей 00 копеек".
fn amount_in_words(kopecks: i64) -> String {
    let abs = kopecks.unsigned_abs();
    let (rub, kop) = (abs / 100, abs % 100);
    let mut words = if kopecks < 0 {
        "минус ".to_owned()
    } else {
        String::new()
    };
    words.push_str(&number_in_words(rub, false));
    words.push(' ');
    words.push_str(plural(rub, ["рубль", "рубля", "рублей"]));
    words.push_str(&format!(" {kop:02} "));
    words.push_str(plural(kop, ["копейка", "копейки", "копеек"]));
    capitalise(&words)
}

/// A whole number in Russian words; `feminine` for the gender of the noun
/// that follows ("одна тысяча", "две копейки").
fn number_in_words(n: u64, feminine: bool) -> String {
    // Each scale with its gender and forms for 1, 2-4 and 5+; u64::MAX / 100,
    // the most roubles an i64 of kopecks holds, is below 10^18.
    const SCALES: [(bool, [&str; 3]); 6] = [
        (false, ["", "", ""]),
        (true, ["тысяча", "тысячи", "тысяч"]),
        (false, ["миллион", "миллиона", "миллионов"]),
        (false, ["миллиард", "миллиарда", "миллиардов"]),
        (false, ["триллион", "триллиона", "триллионов"]),
        (false, ["квадриллион", "квадриллиона", "квадриллионов"]),
    ];
    if n == 0 {
        return "ноль".to_owned();
    }
    let mut parts: Vec<&str> = Vec::new();
    let mut groups = Vec::new();
    let mut rest = n;
    while rest > 0 {
        groups.push(rest % 1000);
        rest /= 1000;
    }
    for (scale, &group) in groups.iter().enumerate().rev() {
        if group == 0 {
            continue;
        }
        // Groups past the last scale cannot occur (see SCALES) but would be
        // read as units rather than panic.
        let (scale_feminine, forms) = SCALES.get(scale).copied().unwrap_or(SCALES[0]);
        let feminine = if scale == 0 { feminine } else { scale_feminine };
        parts.extend(triad_words(group, feminine));
        if scale > 0 {
            parts.push(plural(group, forms));
        }
    }
    parts.join(" ")
}

fn triad_words(n: u64, feminine: bool) -> Vec<&'static str> {
    const HUNDREDS: [&str; 10] = [
        "",
        "сто",
        "двести",
        "триста",
        "четыреста",
        "пятьсот",
        "шестьсот",
        "семьсот",
        "восемьсот",
        "девятьсот",
    ];
    const TENS: [&str; 10] = [
        "",
        "",
        "двадцать",
        "тридцать",
        "сорок",
        "пятьдесят",
        "шестьдесят",
        "семьдесят",
        "восемьдесят",
        "девяносто",
    ];
    const TEENS: [&str; 10] = [
        "десять",
        "одиннадцать",
        "двенадцать",
        "тринадцать",
        "четырнадцать",
        "пятнадцать",
        "шестнадцать",
        "семнадцать",
        "восемнадцать",
        "девятнадцать",
    ];
    const UNITS: [&str; 10] = [
        "",
        "один",
        "два",
        "три",
        "четыре",
        "пять",
        "шесть",
        "семь",
        "восемь",
        "девять",
    ];
    let n = (n % 1000) as usize;
    let (h, t, u) = (n / 100, n / 10 % 10, n % 10);
    let mut words = vec![HUNDREDS[h]];
    if t == 1 {
        words.push(TEENS[u]);
    } else {
        words.push(TENS[t]);
        words.push(match (u, feminine) {
            (1, true) => "одна",
            (2, true) => "две",
            _ => UNITS[u],
        });
    }
    words.retain(|w| !w.is_empty());
    words
}

/// The form of a noun after `n`: 1 (21, 101…), 2-4 (22…), or 5-20 and 0.
fn plural(n: u64, forms: [&'static str; 3]) -> &'static str {
    match (n % 10, n % 100) {
        (_, 11..=14) => forms[2],
        (1, _) => forms[0],
        (2..=4, _) => forms[1],
        _ => forms[2],
    }
}

fn capitalise(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

// ---------------------------------------------------------------------------
// The font

static FONT_FILE: &[u8] = include_bytes!("../../assets/fonts/DejaVuSans-subset.ttf");

/// The PDF name of the embedded font; the tag before "+" marks a subset.
const FONT_NAME: &[u8] = b"MGDJVS+DejaVuSans";

/// The embedded font, parsed once, and its file compressed once.
struct Font {
    face: Face<'static>,
    /// 1000 / units per em: PDF glyph widths are in thousandths of an em.
    scale: f32,
    /// The glyph drawn for characters the font lacks.
    fallback: GlyphId,
    compressed: Vec<u8>,
}

static FONT: LazyLock<Font> = LazyLock::new(|| {
    // The file is committed beside this module and its parsing is tested; no
    // input reaches it.
    let face = Face::parse(FONT_FILE, 0).expect("the committed font parses");
    let scale = 1000.0 / f32::from(face.units_per_em().max(1));
    let fallback = face.glyph_index('?').unwrap_or(GlyphId(0));
    Font {
        face,
        scale,
        fallback,
        compressed: miniz_oxide::deflate::compress_to_vec_zlib(FONT_FILE, 9),
    }
});

impl Font {
    fn glyph(&self, c: char) -> GlyphId {
        self.face.glyph_index(c).unwrap_or(self.fallback)
    }

    /// Advance width in thousandths of an em.
    fn advance(&self, glyph: GlyphId) -> f32 {
        f32::from(self.face.glyph_hor_advance(glyph).unwrap_or(0)) * self.scale
    }

    fn width(&self, text: &str, size: f32) -> f32 {
        text.chars()
            .map(|c| self.advance(self.glyph(c)))
            .sum::<f32>()
            * size
            / 1000.0
    }

    /// Whether `text` is at most `width` wide; stops measuring as soon as it
    /// is not, so a huge word costs no more than a line's worth of lookups.
    fn fits(&self, text: &str, size: f32, width: f32) -> bool {
        let mut total = 0.0;
        for c in text.chars() {
            total += self.advance(self.glyph(c)) * size / 1000.0;
            if total > width {
                return false;
            }
        }
        true
    }

    fn units(&self, value: i16) -> f32 {
        f32::from(value) * self.scale
    }
}

/// Control characters (line breaks and tabs included) become spaces: every
/// piece of text is laid out by this module's own wrapping.
fn clean(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// `text` broken into lines no wider than `width`, at spaces where it can and
/// inside a word where a word alone is too wide; at most `max_lines`, the
/// last ending in "…" when some text was left out.
fn wrap(text: &str, size: f32, width: f32, max_lines: usize) -> Vec<String> {
    let font = &*FONT;
    let max_lines = max_lines.max(1);
    let text = clean(text);
    let mut lines: Vec<String> = Vec::new();
    let mut current = String::new();
    let mut cut = false;
    for word in text.split(' ').filter(|w| !w.is_empty()) {
        if lines.len() >= max_lines {
            cut = true;
            break;
        }
        let candidate = if current.is_empty() {
            word.to_owned()
        } else {
            format!("{current} {word}")
        };
        if font.fits(&candidate, size, width) {
            current = candidate;
            continue;
        }
        if !current.is_empty() {
            lines.push(std::mem::take(&mut current));
        }
        if font.fits(word, size, width) {
            current = word.to_owned();
            continue;
        }
        // A word wider than the column: as many characters as fit, at least
        // one, so that every step makes progress.
        let mut piece_width = 0.0;
        for c in word.chars() {
            let w = font.advance(font.glyph(c)) * size / 1000.0;
            if !current.is_empty() && piece_width + w > width {
                lines.push(std::mem::take(&mut current));
                piece_width = 0.0;
                if lines.len() >= max_lines {
                    cut = true;
                    break;
                }
            }
            current.push(c);
            piece_width += w;
        }
    }
    if !current.is_empty() {
        if lines.len() >= max_lines {
            cut = true;
        } else {
            lines.push(current);
        }
    }
    if cut {
        lines.truncate(max_lines);
        if let Some(last) = lines.last_mut() {
            while !last.is_empty() && font.width(&format!("{last}…"), size) > width {
                last.pop();
            }
            let kept = last.trim_end().len();
            last.truncate(kept);
            last.push('…');
        }
    }
    lines
}

// ---------------------------------------------------------------------------
// Layout

const PAGE_WIDTH: f32 = 595.28;
const PAGE_HEIGHT: f32 = 841.89;
const MARGIN: f32 = 42.0;
const LEFT: f32 = MARGIN;
const RIGHT: f32 = PAGE_WIDTH - MARGIN;
const CONTENT_WIDTH: f32 = RIGHT - LEFT;
const TOP: f32 = PAGE_HEIGHT - MARGIN;
const BOTTOM: f32 = MARGIN + 14.0;

const TITLE: f32 = 13.0;
const BODY: f32 = 9.0;
const TABLE: f32 = 8.5;
const SMALL: f32 = 7.5;

/// The distance between baselines of a text of `size`.
fn leading(size: f32) -> f32 {
    size * 1.3
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Align {
    Left,
    Center,
    Right,
}

/// A table column: its heading, width and alignment, and how many lines of a
/// cell it shows at most.
struct Column {
    heading: &'static str,
    width: f32,
    align: Align,
    max_lines: usize,
}

const LINE_COLUMNS: [Column; 6] = [
    Column {
        heading: "№",
        width: 24.0,
        align: Align::Center,
        max_lines: 2,
    },
    Column {
        heading: "",
        width: CONTENT_WIDTH - 24.0 - 52.0 - 44.0 - 84.0 - 90.0,
        align: Align::Left,
        max_lines: 24,
    },
    Column {
        heading: "Кол-во",
        width: 52.0,
        align: Align::Right,
        max_lines: 4,
    },
    Column {
        heading: "Ед.",
        width: 44.0,
        align: Align::Center,
        max_lines: 4,
    },
    Column {
        heading: "Цена, руб.",
        width: 84.0,
        align: Align::Right,
        max_lines: 4,
    },
    Column {
        heading: "Сумма, руб.",
        width: 90.0,
        align: Align::Right,
        max_lines: 4,
    },
];

const CELL_PAD: f32 = 3.0;

/// The pages being written and the cursor on the current one.
struct Writer {
    done: Vec<Content>,
    page: Content,
    /// The top of the free space on the current page.
    y: f32,
    /// Every glyph drawn, with the character it stands for, for the widths
    /// and the `ToUnicode` map.
    used: BTreeMap<u16, char>,
}

impl Writer {
    fn new() -> Self {
        Self {
            done: Vec::new(),
            page: Content::new(),
            y: TOP,
            used: BTreeMap::new(),
        }
    }

    fn new_page(&mut self) {
        let page = std::mem::replace(&mut self.page, Content::new());
        self.done.push(page);
        self.y = TOP;
    }

    /// Starts a new page unless `height` fits below the cursor (or the page is
    /// still empty, where waiting would not help). Returns whether it did.
    fn ensure(&mut self, height: f32) -> bool {
        if self.y - height < BOTTOM && self.y < TOP {
            self.new_page();
            true
        } else {
            false
        }
    }

    fn gap(&mut self, height: f32) {
        self.y -= height;
    }

    /// One line of text with its baseline at `y`.
    fn text(&mut self, x: f32, y: f32, size: f32, bold: bool, text: &str) {
        let font = &*FONT;
        let mut encoded = Vec::with_capacity(text.len() * 2);
        for c in clean(text).chars() {
            let glyph = font.glyph(c);
            let shown = if glyph == font.fallback { '?' } else { c };
            self.used.entry(glyph.0).or_insert(shown);
            encoded.extend_from_slice(&glyph.0.to_be_bytes());
        }
        let content = &mut self.page;
        content.save_state();
        content.begin_text();
        content.set_font(Name(b"F1"), size);
        if bold {
            // One face serves both weights: bold is the outline stroked over
            // the fill, a thirtieth of the size wide.
            content.set_text_rendering_mode(TextRenderingMode::FillStroke);
            content.set_line_width(size / 30.0);
        }
        content.next_line(x, y);
        content.show(Str(&encoded));
        content.end_text();
        content.restore_state();
    }

    /// `text` placed within the span `(left, width)`.
    fn text_aligned(
        &mut self,
        (left, width): (f32, f32),
        y: f32,
        size: f32,
        bold: bool,
        align: Align,
        text: &str,
    ) {
        let x = match align {
            Align::Left => left,
            Align::Center => left + (width - FONT.width(text, size)) / 2.0,
            Align::Right => left + width - FONT.width(text, size),
        };
        self.text(x, y, size, bold, text);
    }

    fn stroke_line(&mut self, x1: f32, y1: f32, x2: f32, y2: f32, width: f32) {
        self.page
            .set_line_width(width)
            .move_to(x1, y1)
            .line_to(x2, y2)
            .stroke();
    }

    fn stroke_rect(&mut self, x: f32, y: f32, width: f32, height: f32) {
        self.page
            .set_line_width(0.6)
            .rect(x, y, width, height)
            .stroke();
    }

    fn rule(&mut self, width: f32) {
        self.ensure(8.0);
        self.y -= 4.0;
        self.stroke_line(LEFT, self.y, RIGHT, self.y, width);
        self.y -= 4.0;
    }

    /// Lines of wrapped text across the page, breaking pages between lines.
    fn paragraph(&mut self, text: &str, size: f32, bold: bool, max_lines: usize) {
        for line in wrap(text, size, CONTENT_WIDTH, max_lines) {
            self.ensure(leading(size));
            self.y -= leading(size);
            self.text(LEFT, self.y + size * 0.25, size, bold, &line);
        }
        self.y -= size * 0.4;
    }

    fn title(&mut self, title: &str) {
        let lines = wrap(title, TITLE, CONTENT_WIDTH, 3);
        self.ensure(lines.len() as f32 * leading(TITLE) + 10.0);
        for line in lines {
            self.y -= leading(TITLE);
            self.text(LEFT, self.y + TITLE * 0.25, TITLE, true, &line);
        }
        self.y -= 4.0;
        self.stroke_line(LEFT, self.y, RIGHT, self.y, 1.5);
        self.y -= 8.0;
    }

    /// A label on the left and its wrapped value beside it.
    fn party(&mut self, label: &str, value: &str) {
        const LABEL_WIDTH: f32 = 96.0;
        let labels = wrap(label, BODY, LABEL_WIDTH - 6.0, 3);
        let values = wrap(value, BODY, CONTENT_WIDTH - LABEL_WIDTH, 12);
        let rows = labels.len().max(values.len());
        self.ensure(rows as f32 * leading(BODY) + 4.0);
        let top = self.y;
        for (i, line) in labels.iter().enumerate() {
            let baseline = top - (i + 1) as f32 * leading(BODY) + BODY * 0.25;
            self.text(LEFT, baseline, BODY, false, line);
        }
        for (i, line) in values.iter().enumerate() {
            let baseline = top - (i + 1) as f32 * leading(BODY) + BODY * 0.25;
            self.text(LEFT + LABEL_WIDTH, baseline, BODY, true, line);
        }
        self.y = top - rows as f32 * leading(BODY) - 4.0;
    }

    /// The seller's bank details in the boxed block that heads a Russian
    /// invoice, where a payer's bank clerk looks for them.
    fn bank_block(&mut self, seller: &Requisites) {
        const MID: f32 = 50.0;
        const VALUE: f32 = 150.0;
        let left_width = CONTENT_WIDTH - MID - VALUE;
        let (x_mid, x_value) = (LEFT + left_width, LEFT + left_width + MID);
        let leading = leading(BODY);
        let bank_lines = wrap(&seller.bank_name, BODY, left_width - 2.0 * CELL_PAD, 2);
        let seller_lines = wrap(&seller.legal_name, BODY, left_width - 2.0 * CELL_PAD, 2);
        let bank_height = (bank_lines.len() as f32 + 1.0) * leading + 2.0 * CELL_PAD + 4.0;
        let seller_height = (seller_lines.len() as f32 + 2.0) * leading + 2.0 * CELL_PAD + 4.0;
        let top = self.y;
        let middle = top - bank_height;
        let bottom = middle - seller_height;
        let kpp_split = LEFT + left_width / 2.0;

        self.stroke_rect(LEFT, bottom, CONTENT_WIDTH, top - bottom);
        self.stroke_line(LEFT, middle, RIGHT, middle, 0.6);
        self.stroke_line(x_mid, top, x_mid, bottom, 0.6);
        self.stroke_line(x_value, top, x_value, bottom, 0.6);
        // "БИК" and the correspondent account share the bank's box; the INN
        // and KPP share one row above the seller's name.
        let bic_split = top - leading - 2.0 * CELL_PAD;
        self.stroke_line(x_mid, bic_split, x_value, bic_split, 0.6);
        let inn_split = middle - leading - 2.0 * CELL_PAD;
        self.stroke_line(LEFT, inn_split, x_mid, inn_split, 0.6);
        self.stroke_line(kpp_split, middle, kpp_split, inn_split, 0.6);

        let first = |box_top: f32| box_top - CELL_PAD - BODY * 0.95;
        for (i, line) in bank_lines.iter().enumerate() {
            self.text(
                LEFT + CELL_PAD,
                first(top) - i as f32 * leading,
                BODY,
                false,
                line,
            );
        }
        self.text(
            LEFT + CELL_PAD,
            middle + CELL_PAD + 1.0,
            SMALL,
            false,
            "Банк получателя",
        );
        self.text(x_mid + CELL_PAD, first(top), BODY, false, "БИК");
        self.text(x_value + CELL_PAD, first(top), BODY, false, &seller.bic);
        self.text(x_mid + CELL_PAD, first(bic_split), BODY, false, "Сч. №");
        self.text(
            x_value + CELL_PAD,
            first(bic_split),
            BODY,
            false,
            &seller.correspondent_account,
        );

        self.text(
            LEFT + CELL_PAD,
            first(middle),
            BODY,
            false,
            &format!("ИНН {}", seller.inn),
        );
        let kpp = seller.kpp.as_deref().unwrap_or("");
        self.text(
            kpp_split + CELL_PAD,
            first(middle),
            BODY,
            false,
            &format!("КПП {kpp}"),
        );
        for (i, line) in seller_lines.iter().enumerate() {
            self.text(
                LEFT + CELL_PAD,
                first(inn_split) - i as f32 * leading,
                BODY,
                false,
                line,
            );
        }
        self.text(
            LEFT + CELL_PAD,
            bottom + CELL_PAD + 1.0,
            SMALL,
            false,
            "Получатель",
        );
        self.text(x_mid + CELL_PAD, first(middle), BODY, false, "Сч. №");
        self.text(
            x_value + CELL_PAD,
            first(middle),
            BODY,
            false,
            &seller.settlement_account,
        );

        self.y = bottom;
    }

    /// One table row: each cell wrapped to its column, the row as tall as its
    /// tallest cell, borders around every cell.
    fn table_row(&mut self, cells: &[String], size: f32, bold: bool, shaded: bool) -> f32 {
        let wrapped: Vec<Vec<String>> = LINE_COLUMNS
            .iter()
            .zip(cells)
            .map(|(column, cell)| wrap(cell, size, column.width - 2.0 * CELL_PAD, column.max_lines))
            .collect();
        let rows = wrapped.iter().map(Vec::len).max().unwrap_or(1).max(1);
        let height = rows as f32 * leading(size) + 2.0 * CELL_PAD;
        let top = self.y;
        if shaded {
            self.page
                .save_state()
                .set_fill_gray(0.9)
                .rect(LEFT, top - height, CONTENT_WIDTH, height)
                .fill_nonzero()
                .restore_state();
        }
        let mut x = LEFT;
        for (column, lines) in LINE_COLUMNS.iter().zip(&wrapped) {
            self.stroke_rect(x, top - height, column.width, height);
            for (i, line) in lines.iter().enumerate() {
                let baseline = top - CELL_PAD - (i + 1) as f32 * leading(size) + size * 0.3;
                let align = if bold { Align::Center } else { column.align };
                self.text_aligned(
                    (x + CELL_PAD, column.width - 2.0 * CELL_PAD),
                    baseline,
                    size,
                    bold,
                    align,
                    line,
                );
            }
            x += column.width;
        }
        self.y = top - height;
        height
    }

    fn table_heading(&mut self, description_heading: &str) {
        let cells: Vec<String> = LINE_COLUMNS
            .iter()
            .enumerate()
            .map(|(i, c)| {
                if i == 1 {
                    description_heading.to_owned()
                } else {
                    c.heading.to_owned()
                }
            })
            .collect();
        self.table_row(&cells, TABLE, true, true);
    }

    /// The invoice's lines, with the heading repeated on every page the table
    /// runs onto.
    fn lines_table(&mut self, lines: &[Line], description_heading: &str) {
        let heading_height = leading(TABLE) * 2.0 + 2.0 * CELL_PAD;
        self.ensure(heading_height * 2.0);
        self.table_heading(description_heading);
        for (i, line) in lines.iter().enumerate() {
            let cells = [
                (i + 1).to_string(),
                line.description.clone(),
                quantity_text(line.quantity),
                line.unit.clone(),
                money(line.unit_price_kopecks),
                money(line.amount_kopecks),
            ];
            let height = self.measure_row(&cells, TABLE);
            if self.ensure(height) {
                self.table_heading(description_heading);
            }
            self.table_row(&cells, TABLE, false, false);
        }
        self.gap(4.0);
    }

    fn measure_row(&self, cells: &[String], size: f32) -> f32 {
        let rows = LINE_COLUMNS
            .iter()
            .zip(cells)
            .map(|(column, cell)| {
                wrap(cell, size, column.width - 2.0 * CELL_PAD, column.max_lines).len()
            })
            .max()
            .unwrap_or(1)
            .max(1);
        rows as f32 * leading(size) + 2.0 * CELL_PAD
    }

    /// Labels and sums right-aligned under the table's money columns.
    fn totals(&mut self, rows: &[(&str, i64)]) {
        let amount_width = LINE_COLUMNS[5].width + LINE_COLUMNS[4].width;
        let label_width = 200.0;
        for &(label, kopecks) in rows {
            let amounts = wrap(&money(kopecks), BODY, amount_width - CELL_PAD, 3);
            let height = amounts.len() as f32 * leading(BODY);
            self.ensure(height);
            let baseline = self.y - leading(BODY) + BODY * 0.25;
            self.text_aligned(
                (RIGHT - amount_width - label_width - 6.0, label_width),
                baseline,
                BODY,
                true,
                Align::Right,
                label,
            );
            for (i, line) in amounts.iter().enumerate() {
                let y = baseline - i as f32 * leading(BODY);
                self.text_aligned(
                    (RIGHT - amount_width, amount_width - CELL_PAD),
                    y,
                    BODY,
                    true,
                    Align::Right,
                    line,
                );
            }
            self.y -= height;
        }
        self.gap(6.0);
    }

    /// "Всего … на сумму …" and the sum in words beneath it.
    fn summary(&mut self, line: &str, total_kopecks: i64) {
        self.paragraph(line, BODY, false, 3);
        self.paragraph(&amount_in_words(total_kopecks), BODY, true, 4);
    }

    fn invoice_signatures(&mut self) {
        let height = leading(BODY) * 3.0;
        self.ensure(height);
        let baseline = self.y - leading(BODY) * 1.5;
        let half = CONTENT_WIDTH / 2.0;
        for (x, role, name) in [
            (LEFT, "Руководитель", SELLER_DIRECTOR),
            (LEFT + half + 10.0, "Бухгалтер", SELLER_ACCOUNTANT),
        ] {
            self.text(x, baseline, BODY, true, role);
            let line_start = x + 72.0;
            let line_end = x + half - 90.0;
            self.stroke_line(line_start, baseline - 2.0, line_end, baseline - 2.0, 0.6);
            self.text(line_end + 6.0, baseline, BODY, false, name);
        }
        self.y -= height;
    }

    /// Both parties side by side: name, a line to sign on, and the seal's
    /// place.
    fn act_signatures(&mut self, seller: &Requisites, buyer: &Requisites) {
        let column = (CONTENT_WIDTH - 20.0) / 2.0;
        let seller_lines = wrap(&seller.legal_name, BODY, column, 6);
        let buyer_lines = wrap(&buyer.legal_name, BODY, column, 6);
        let name_rows = seller_lines.len().max(buyer_lines.len());
        let height = (name_rows as f32 + 5.0) * leading(BODY);
        self.ensure(height);
        let top = self.y;
        let buyer_signer = if buyer.is_sole_proprietor() {
            // A sole proprietor signs in person; the name is the entity's.
            buyer.legal_name.trim_start_matches("ИП").trim().to_owned()
        } else {
            String::new()
        };
        for (x, role, lines, signer) in [
            (
                LEFT,
                "ИСПОЛНИТЕЛЬ",
                &seller_lines,
                SELLER_DIRECTOR.to_owned(),
            ),
            (LEFT + column + 20.0, "ЗАКАЗЧИК", &buyer_lines, buyer_signer),
        ] {
            let mut baseline = top - leading(BODY);
            self.text(x, baseline, BODY, true, role);
            for line in lines {
                baseline -= leading(BODY);
                self.text(x, baseline, BODY, false, line);
            }
            baseline = top - (name_rows as f32 + 3.5) * leading(BODY);
            let line_end = x + column * 0.45;
            self.stroke_line(x, baseline - 2.0, line_end, baseline - 2.0, 0.6);
            let signer = wrap(&signer, BODY, column * 0.55 - 8.0, 1);
            if let Some(signer) = signer.first() {
                self.text(line_end + 6.0, baseline, BODY, false, signer);
            }
            self.text(x, baseline - leading(BODY) * 1.2, SMALL, false, "М. П.");
        }
        self.y = top - height;
    }

    /// The PDF: catalog, pages with page numbers when there are several, the
    /// font with the widths and `ToUnicode` entries of the glyphs used.
    fn finish(mut self, title: &str, created: DateTime<Utc>) -> Vec<u8> {
        let last = std::mem::replace(&mut self.page, Content::new());
        self.done.push(last);
        let count = self.done.len();
        if count > 1 {
            let pages = std::mem::take(&mut self.done);
            for (i, mut page) in pages.into_iter().enumerate() {
                std::mem::swap(&mut self.page, &mut page);
                let label = format!("Страница {} из {count}", i + 1);
                self.text_aligned(
                    (LEFT, CONTENT_WIDTH),
                    MARGIN,
                    SMALL,
                    false,
                    Align::Right,
                    &label,
                );
                std::mem::swap(&mut self.page, &mut page);
                self.done.push(page);
            }
        }

        let font = &*FONT;
        let catalog = Ref::new(1);
        let page_tree = Ref::new(2);
        let type0 = Ref::new(3);
        let cid_font = Ref::new(4);
        let descriptor = Ref::new(5);
        let font_file = Ref::new(6);
        let to_unicode = Ref::new(7);
        let info = Ref::new(8);
        let page_refs: Vec<(Ref, Ref)> = (0..count)
            .map(|i| {
                let base = i32::try_from(9 + 2 * i).unwrap_or(i32::MAX - 1);
                (Ref::new(base), Ref::new(base + 1))
            })
            .collect();

        let mut pdf = Pdf::new();
        pdf.catalog(catalog).pages(page_tree).lang(TextStr("ru-RU"));
        pdf.pages(page_tree)
            .kids(page_refs.iter().map(|&(page, _)| page))
            .count(i32::try_from(count).unwrap_or(i32::MAX));
        for (content, &(page_ref, content_ref)) in self.done.into_iter().zip(&page_refs) {
            let mut page = pdf.page(page_ref);
            page.media_box(Rect::new(0.0, 0.0, PAGE_WIDTH, PAGE_HEIGHT))
                .parent(page_tree)
                .contents(content_ref);
            page.resources().fonts().pair(Name(b"F1"), type0);
            page.finish();
            let data = miniz_oxide::deflate::compress_to_vec_zlib(&content.finish(), 6);
            pdf.stream(content_ref, &data).filter(Filter::FlateDecode);
        }

        let mut date = moscow(created);
        date = date.with_nanosecond(0).unwrap_or(date);
        let mut info_dict = pdf.document_info(info);
        info_dict
            .title(TextStr(title))
            .producer(TextStr("mediagen mock server"));
        if let (Ok(year), Ok(month), Ok(day), Ok(hour), Ok(minute), Ok(second)) = (
            u16::try_from(date.year()),
            u8::try_from(date.month()),
            u8::try_from(date.day()),
            u8::try_from(date.hour()),
            u8::try_from(date.minute()),
            u8::try_from(date.second()),
        ) && year <= 9999
        {
            info_dict.creation_date(
                Date::new(year)
                    .month(month)
                    .day(day)
                    .hour(hour)
                    .minute(minute)
                    .second(second)
                    .utc_offset_hour(3),
            );
        }
        info_dict.finish();

        pdf.type0_font(type0)
            .base_font(Name(FONT_NAME))
            .encoding_predefined(Name(b"Identity-H"))
            .descendant_font(cid_font)
            .to_unicode(to_unicode);

        let system_info = SystemInfo {
            registry: Str(b"Adobe"),
            ordering: Str(b"Identity"),
            supplement: 0,
        };
        let mut cid = pdf.cid_font(cid_font);
        cid.subtype(CidFontType::Type2)
            .base_font(Name(FONT_NAME))
            .system_info(system_info)
            .font_descriptor(descriptor)
            .default_width(0.0)
            .cid_to_gid_map_predefined(Name(b"Identity"));
        {
            let mut widths = cid.widths();
            for &glyph in self.used.keys() {
                widths.consecutive(glyph, [font.advance(GlyphId(glyph))]);
            }
        }
        cid.finish();

        let face = &font.face;
        let bbox = face.global_bounding_box();
        pdf.font_descriptor(descriptor)
            .name(Name(FONT_NAME))
            .flags(FontFlags::SYMBOLIC)
            .bbox(Rect::new(
                font.units(bbox.x_min),
                font.units(bbox.y_min),
                font.units(bbox.x_max),
                font.units(bbox.y_max),
            ))
            .italic_angle(0.0)
            .ascent(font.units(face.ascender()))
            .descent(font.units(face.descender()))
            .cap_height(font.units(face.capital_height().unwrap_or(face.ascender())))
            .stem_v(80.0)
            .font_file2(font_file);

        pdf.stream(font_file, &font.compressed)
            .filter(Filter::FlateDecode)
            .pair(
                Name(b"Length1"),
                i32::try_from(FONT_FILE.len()).unwrap_or(i32::MAX),
            );

        let mut cmap = UnicodeCmap::new(Name(b"Custom"), system_info);
        for (&glyph, &c) in &self.used {
            cmap.pair(glyph, c);
        }
        pdf.cmap(to_unicode, &cmap.finish())
            .name(Name(b"Custom"))
            .system_info(system_info);

        pdf.finish()
    }
}

// Sums in kopecks are written roubles_kopecks (`25_000_00` is 25 000,00 ₽),
// which reads better here than the grouping by threes that clippy expects.
#[cfg(test)]
#[allow(clippy::inconsistent_digit_grouping)]
mod tests {
    use chrono::TimeZone;

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
            vat_kopecks: (total * 20 + 60) / 120,
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
            "4 166,67",
            "В том числе НДС (20%):",
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
            "1 666,67",
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
            vat_kopecks: i64::MAX,
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
