//! The embedded font (DejaVu Sans, see `assets/fonts/README.md`): glyphs,
//! widths, and text wrapped to a column.

use std::sync::LazyLock;

use ttf_parser::{Face, GlyphId};

pub(super) static FONT_FILE: &[u8] = include_bytes!("../../../assets/fonts/DejaVuSans-subset.ttf");

/// The PDF name of the embedded font; the tag before "+" marks a subset.
pub(super) const FONT_NAME: &[u8] = b"MGDJVS+DejaVuSans";

/// The embedded font, parsed once, and its file compressed once.
pub(super) struct Font {
    pub(super) face: Face<'static>,
    /// 1000 / units per em: PDF glyph widths are in thousandths of an em.
    pub(super) scale: f32,
    /// The glyph drawn for characters the font lacks.
    pub(super) fallback: GlyphId,
    pub(super) compressed: Vec<u8>,
}

pub(super) static FONT: LazyLock<Font> = LazyLock::new(|| {
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
    pub(super) fn glyph(&self, c: char) -> GlyphId {
        self.face.glyph_index(c).unwrap_or(self.fallback)
    }

    /// Advance width in thousandths of an em.
    pub(super) fn advance(&self, glyph: GlyphId) -> f32 {
        f32::from(self.face.glyph_hor_advance(glyph).unwrap_or(0)) * self.scale
    }

    pub(super) fn width(&self, text: &str, size: f32) -> f32 {
        text.chars()
            .map(|c| self.advance(self.glyph(c)))
            .sum::<f32>()
            * size
            / 1000.0
    }

    /// Whether `text` is at most `width` wide; stops measuring as soon as it
    /// is not, so a huge word costs no more than a line's worth of lookups.
    pub(super) fn fits(&self, text: &str, size: f32, width: f32) -> bool {
        let mut total = 0.0;
        for c in text.chars() {
            total += self.advance(self.glyph(c)) * size / 1000.0;
            if total > width {
                return false;
            }
        }
        true
    }

    pub(super) fn units(&self, value: i16) -> f32 {
        f32::from(value) * self.scale
    }
}

/// Control characters (line breaks and tabs included) become spaces: every
/// piece of text is laid out by this module's own wrapping.
pub(super) fn clean(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// `text` broken into lines no wider than `width`, at spaces where it can and
/// inside a word where a word alone is too wide; at most `max_lines`, the
/// last ending in "…" when some text was left out.
pub(super) fn wrap(text: &str, size: f32, width: f32, max_lines: usize) -> Vec<String> {
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
