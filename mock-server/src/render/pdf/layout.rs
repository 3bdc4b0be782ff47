//! The page: a cursor that sets text and tables down the page, starting a new
//! page when a block does not fit, and the file it is written out as.

use std::collections::BTreeMap;

use chrono::{DateTime, Datelike, Timelike, Utc};
use pdf_writer::types::{CidFontType, FontFlags, SystemInfo, TextRenderingMode, UnicodeCmap};
use pdf_writer::{Content, Date, Filter, Finish, Name, Pdf, Rect, Ref, Str, TextStr};
use ttf_parser::GlyphId;

use super::font::{FONT, FONT_FILE, FONT_NAME, clean, wrap};
use super::words::{amount_in_words, money, quantity_text};
use super::{Line, SELLER_ACCOUNTANT, SELLER_DIRECTOR};
use crate::domain::billing::moscow;
use crate::domain::requisites::Requisites;

pub(super) const PAGE_WIDTH: f32 = 595.28;
pub(super) const PAGE_HEIGHT: f32 = 841.89;
pub(super) const MARGIN: f32 = 42.0;
pub(super) const LEFT: f32 = MARGIN;
pub(super) const RIGHT: f32 = PAGE_WIDTH - MARGIN;
pub(super) const CONTENT_WIDTH: f32 = RIGHT - LEFT;
pub(super) const TOP: f32 = PAGE_HEIGHT - MARGIN;
pub(super) const BOTTOM: f32 = MARGIN + 14.0;

pub(super) const TITLE: f32 = 13.0;
pub(super) const BODY: f32 = 9.0;
pub(super) const TABLE: f32 = 8.5;
pub(super) const SMALL: f32 = 7.5;

/// The distance between baselines of a text of `size`.
pub(super) fn leading(size: f32) -> f32 {
    size * 1.3
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Align {
    Left,
    Center,
    Right,
}

/// A table column: its heading, width and alignment, and how many lines of a
/// cell it shows at most.
pub(super) struct Column {
    heading: &'static str,
    width: f32,
    align: Align,
    max_lines: usize,
}

pub(super) const LINE_COLUMNS: [Column; 6] = [
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

pub(super) const CELL_PAD: f32 = 3.0;

/// The pages being written and the cursor on the current one.
pub(super) struct Writer {
    done: Vec<Content>,
    page: Content,
    /// The top of the free space on the current page.
    y: f32,
    /// Every glyph drawn, with the character it stands for, for the widths
    /// and the `ToUnicode` map.
    used: BTreeMap<u16, char>,
}

impl Writer {
    pub(super) fn new() -> Self {
        Self {
            done: Vec::new(),
            page: Content::new(),
            y: TOP,
            used: BTreeMap::new(),
        }
    }

    pub(super) fn new_page(&mut self) {
        let page = std::mem::replace(&mut self.page, Content::new());
        self.done.push(page);
        self.y = TOP;
    }

    /// Starts a new page unless `height` fits below the cursor (or the page is
    /// still empty, where waiting would not help). Returns whether it did.
    pub(super) fn ensure(&mut self, height: f32) -> bool {
        if self.y - height < BOTTOM && self.y < TOP {
            self.new_page();
            true
        } else {
            false
        }
    }

    pub(super) fn gap(&mut self, height: f32) {
        self.y -= height;
    }

    /// One line of text with its baseline at `y`.
    pub(super) fn text(&mut self, x: f32, y: f32, size: f32, bold: bool, text: &str) {
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
    pub(super) fn text_aligned(
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

    pub(super) fn stroke_line(&mut self, x1: f32, y1: f32, x2: f32, y2: f32, width: f32) {
        self.page
            .set_line_width(width)
            .move_to(x1, y1)
            .line_to(x2, y2)
            .stroke();
    }

    pub(super) fn stroke_rect(&mut self, x: f32, y: f32, width: f32, height: f32) {
        self.page
            .set_line_width(0.6)
            .rect(x, y, width, height)
            .stroke();
    }

    pub(super) fn rule(&mut self, width: f32) {
        self.ensure(8.0);
        self.y -= 4.0;
        self.stroke_line(LEFT, self.y, RIGHT, self.y, width);
        self.y -= 4.0;
    }

    /// Lines of wrapped text across the page, breaking pages between lines.
    pub(super) fn paragraph(&mut self, text: &str, size: f32, bold: bool, max_lines: usize) {
        for line in wrap(text, size, CONTENT_WIDTH, max_lines) {
            self.ensure(leading(size));
            self.y -= leading(size);
            self.text(LEFT, self.y + size * 0.25, size, bold, &line);
        }
        self.y -= size * 0.4;
    }

    pub(super) fn title(&mut self, title: &str) {
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
    pub(super) fn party(&mut self, label: &str, value: &str) {
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
    pub(super) fn bank_block(&mut self, seller: &Requisites) {
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
    pub(super) fn table_row(
        &mut self,
        cells: &[String],
        size: f32,
        bold: bool,
        shaded: bool,
    ) -> f32 {
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

    pub(super) fn table_heading(&mut self, description_heading: &str) {
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
    pub(super) fn lines_table(&mut self, lines: &[Line], description_heading: &str) {
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

    pub(super) fn measure_row(&self, cells: &[String], size: f32) -> f32 {
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
    pub(super) fn totals(&mut self, rows: &[(&str, i64)]) {
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
    pub(super) fn summary(&mut self, line: &str, total_kopecks: i64) {
        self.paragraph(line, BODY, false, 3);
        self.paragraph(&amount_in_words(total_kopecks), BODY, true, 4);
    }

    pub(super) fn invoice_signatures(&mut self) {
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
    pub(super) fn act_signatures(&mut self, seller: &Requisites, buyer: &Requisites) {
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
    pub(super) fn finish(mut self, title: &str, created: DateTime<Utc>) -> Vec<u8> {
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
