//! Sums, quantities and dates as Russian documents write them, and amounts in
//! words ("Двадцать пять тысяч рублей 00 копеек").

use chrono::{Datelike, NaiveDate};

/// "22 ноября 2026 г."
pub(super) fn date_text(date: NaiveDate) -> String {
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
pub(super) fn money(kopecks: i64) -> String {
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
pub(super) fn money_rub(kopecks: i64) -> String {
    format!("{}\u{a0}руб.", money(kopecks))
}

/// A quantity: whole numbers bare, others with up to three decimals and a
/// decimal comma.
pub(super) fn quantity_text(q: f64) -> String {
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
pub(super) fn amount_in_words(kopecks: i64) -> String {
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
pub(super) fn number_in_words(n: u64, feminine: bool) -> String {
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

pub(super) fn triad_words(n: u64, feminine: bool) -> Vec<&'static str> {
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
pub(super) fn plural(n: u64, forms: [&'static str; 3]) -> &'static str {
    match (n % 10, n % 100) {
        (_, 11..=14) => forms[2],
        (1, _) => forms[0],
        (2..=4, _) => forms[1],
        _ => forms[2],
    }
}

pub(super) fn capitalise(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}
