//! The files behind the `outputUrls` of finished tasks.
//!
//! A client under test downloads what a task produced and may open it, so the
//! mock serves real files: a PNG for images, a WAV for voice and music and an
//! MP4 for video. Images and audio are drawn from a seed (a hash of the
//! prompt), so different prompts visibly and audibly give different results,
//! and the same prompt always gives the same bytes.

use std::f64::consts::TAU;

/// Side of the square image [`render`] draws: large enough to look like a
/// real result, small enough to encode in a few milliseconds.
pub const IMAGE_SIDE: u32 = 512;

/// The largest width or height [`png`] draws, so no argument can make the mock
/// allocate gigabytes.
pub const MAX_IMAGE_SIDE: u32 = 2048;

/// Sample rate of every WAV: the usual rate for speech, and it keeps a
/// 30-second file under a megabyte.
pub const SAMPLE_RATE: u32 = 16_000;

/// The shortest audio [`render`] produces.
pub const MIN_AUDIO_SECONDS: f32 = 1.0;

/// The longest audio [`render`] or [`wav`] produces.
pub const MAX_AUDIO_SECONDS: f32 = 30.0;

/// Made once with ffmpeg; `assets/README.md` has the command. Committed so
/// that building the mock never needs ffmpeg.
const SAMPLE_MP4: &[u8] = include_bytes!("../../assets/sample.mp4");

/// The kind of file a generation produces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MediaKind {
    Image,
    Audio,
    Video,
}

impl MediaKind {
    /// The file extension, without the dot.
    pub fn extension(self) -> &'static str {
        match self {
            Self::Image => "png",
            Self::Audio => "wav",
            Self::Video => "mp4",
        }
    }

    /// The `Content-Type` to serve the file with.
    pub fn content_type(self) -> &'static str {
        match self {
            Self::Image => "image/png",
            Self::Audio => "audio/wav",
            Self::Video => "video/mp4",
        }
    }
}

/// Renders the file for `kind`: a [`IMAGE_SIDE`]-square PNG, a WAV of
/// `seconds` clamped to [`MIN_AUDIO_SECONDS`]..=[`MAX_AUDIO_SECONDS`] (NaN
/// counts as the minimum), or the sample MP4.
pub fn render(kind: MediaKind, seed: u64, seconds: f32) -> Vec<u8> {
    match kind {
        MediaKind::Image => png(seed, IMAGE_SIDE, IMAGE_SIDE),
        MediaKind::Audio => wav(seed, clamp_audio_seconds(seconds)),
        MediaKind::Video => mp4().to_vec(),
    }
}

fn clamp_audio_seconds(seconds: f32) -> f32 {
    // `f32::clamp` passes NaN through, and a task asking for no duration
    // should still get something a player can play.
    if seconds.is_nan() {
        MIN_AUDIO_SECONDS
    } else {
        seconds.clamp(MIN_AUDIO_SECONDS, MAX_AUDIO_SECONDS)
    }
}

/// A small valid MP4 (H.264, 2 seconds, 160x90, no audio) served for every video.
pub fn mp4() -> &'static [u8] {
    SAMPLE_MP4
}

/// An 8-bit RGB PNG of `width` x `height` (each clamped to
/// 1..=[`MAX_IMAGE_SIDE`]): a gradient with rings and soft discs whose
/// colours and layout depend on `seed`.
pub fn png(seed: u64, width: u32, height: u32) -> Vec<u8> {
    let width = width.clamp(1, MAX_IMAGE_SIDE);
    let height = height.clamp(1, MAX_IMAGE_SIDE);
    let pixels = Look::new(seed, width, height).paint();
    // The encoder fails only on zero or oversized dimensions, which the clamp
    // above rules out, or on a failing writer, which a Vec never is.
    encode_png(&pixels, width, height).expect("encoding a clamped image into memory cannot fail")
}

fn encode_png(pixels: &[u8], width: u32, height: u32) -> Result<Vec<u8>, png::EncodingError> {
    let mut out = Vec::new();
    let mut encoder = png::Encoder::new(&mut out, width, height);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    // fdeflate with the Up filter: well under a millisecond for 512x512, where
    // the adaptive filter triples that and zlib's default level takes ten
    // times longer, for a file a client only checks and shows.
    encoder.set_compression(png::Compression::Fastest);
    let mut writer = encoder.write_header()?;
    writer.write_image_data(pixels)?;
    writer.finish()?;
    Ok(out)
}

/// Everything about an image that the seed decides. Lengths are in units of
/// the image's longer side, so a seed draws the same picture at any size.
#[derive(Debug)]
struct Look {
    width: u32,
    height: u32,
    from: [f32; 3],
    to: [f32; 3],
    /// Unit vector of the gradient's direction.
    direction: (f32, f32),
    ring_centre: (f32, f32),
    rings_per_unit: f32,
    discs: Vec<Disc>,
}

#[derive(Debug)]
struct Disc {
    centre: (f32, f32),
    radius: f32,
    colour: [f32; 3],
    opacity: f32,
}

impl Look {
    fn new(seed: u64, width: u32, height: u32) -> Self {
        let mut rng = SplitMix64(seed);
        let extent = (
            width as f32 / width.max(height) as f32,
            height as f32 / width.max(height) as f32,
        );
        // Hues from one harmonious family (analogous to complementary), with
        // saturation and value kept in a range that never looks muddy.
        let hue = rng.unit();
        let spread = rng.between(0.12, 0.5);
        let from = hsv(hue, rng.between(0.55, 0.85), rng.between(0.8, 0.97));
        let to = hsv(hue + spread, rng.between(0.55, 0.9), rng.between(0.35, 0.7));
        let angle = rng.between(0.0, std::f32::consts::TAU);
        let ring_centre = (rng.unit() * extent.0, rng.unit() * extent.1);
        let rings_per_unit = rng.between(4.0, 14.0);
        let disc_count = 3 + rng.below(4);
        let discs = (0..disc_count)
            .map(|_| Disc {
                centre: (rng.unit() * extent.0, rng.unit() * extent.1),
                radius: rng.between(0.05, 0.2),
                colour: hsv(
                    hue + spread * 0.5 + rng.between(0.35, 0.65),
                    rng.between(0.4, 0.8),
                    rng.between(0.85, 1.0),
                ),
                opacity: rng.between(0.45, 0.8),
            })
            .collect();
        Self {
            width,
            height,
            from,
            to,
            direction: (angle.cos(), angle.sin()),
            ring_centre,
            rings_per_unit,
            discs,
        }
    }

    fn paint(&self) -> Vec<u8> {
        let width = self.width as usize;
        let unit = 1.0 / self.width.max(self.height) as f32;
        // One pixel's width: discs fade over it so their edges are antialiased.
        let feather = unit;
        let middle = (
            self.width as f32 * unit / 2.0,
            self.height as f32 * unit / 2.0,
        );
        let mut pixels = vec![0; width * self.height as usize * 3];
        let mut row = vec![[0.0_f32; 3]; width];
        for (y, out) in pixels.chunks_exact_mut(width * 3).enumerate() {
            let py = (y as f32 + 0.5) * unit;
            for (x, rgb) in row.iter_mut().enumerate() {
                let px = (x as f32 + 0.5) * unit;
                let along = (px - middle.0) * self.direction.0 + (py - middle.1) * self.direction.1;
                let ring_distance =
                    ((px - self.ring_centre.0).powi(2) + (py - self.ring_centre.1).powi(2)).sqrt();
                let rings = ring_distance * self.rings_per_unit;
                // Not `fract()`: without SSE4.1 that is a libm call per pixel,
                // and `rings` is never negative, so truncating by `as` is the same.
                let phase = rings - (rings as u32) as f32;
                // A triangle wave: soft bands without a sine per pixel.
                let shade = 0.9 + 0.2 * (1.0 - (2.0 * phase - 1.0).abs());
                *rgb = mix(self.from, self.to, (along + 0.5).clamp(0.0, 1.0)).map(|c| c * shade);
            }

            // Only the pixels a disc's chord covers on this row: testing every
            // pixel against every disc was half of the image's time.
            for disc in &self.discs {
                let dy = py - disc.centre.1;
                let outer = disc.radius + feather;
                if dy.abs() >= outer {
                    continue;
                }
                let half_chord = (outer * outer - dy * dy).sqrt();
                // `as usize` saturates, so a chord starting left of the image starts at 0.
                let first = ((disc.centre.0 - half_chord) / unit - 0.5) as usize;
                let last = (((disc.centre.0 + half_chord) / unit - 0.5) as usize + 1).min(width);
                for (x, rgb) in row.iter_mut().enumerate().take(last).skip(first) {
                    let dx = (x as f32 + 0.5) * unit - disc.centre.0;
                    let distance = (dx * dx + dy * dy).sqrt();
                    let coverage = ((disc.radius - distance) / feather + 0.5).clamp(0.0, 1.0);
                    *rgb = mix(*rgb, disc.colour, coverage * disc.opacity);
                }
            }

            for (rgb, pixel) in row.iter().zip(out.chunks_exact_mut(3)) {
                for (channel, value) in pixel.iter_mut().zip(rgb) {
                    *channel = (value * 255.0) as u8;
                }
            }
        }
        pixels
    }
}

fn mix(a: [f32; 3], b: [f32; 3], t: f32) -> [f32; 3] {
    [0, 1, 2].map(|i| a[i] + (b[i] - a[i]) * t)
}

/// HSV (each 0..1, hue wrapping) to RGB (each 0..1).
fn hsv(hue: f32, saturation: f32, value: f32) -> [f32; 3] {
    let h = hue.rem_euclid(1.0) * 6.0;
    let chroma = value * saturation;
    let second = chroma * (1.0 - (h % 2.0 - 1.0).abs());
    let (r, g, b) = match h as u32 {
        0 => (chroma, second, 0.0),
        1 => (second, chroma, 0.0),
        2 => (0.0, chroma, second),
        3 => (0.0, second, chroma),
        4 => (second, 0.0, chroma),
        _ => (chroma, 0.0, second),
    };
    let floor = value - chroma;
    [r + floor, g + floor, b + floor]
}

/// A 16-bit mono PCM WAV at [`SAMPLE_RATE`] of `seconds` (clamped to
/// 0..=[`MAX_AUDIO_SECONDS`], NaN counting as 0): a pentatonic melody over a
/// drone, whose key, tempo and tune depend on `seed`.
pub fn wav(seed: u64, seconds: f32) -> Vec<u8> {
    let seconds = if seconds.is_nan() {
        0.0
    } else {
        seconds.clamp(0.0, MAX_AUDIO_SECONDS)
    };
    let frames = (seconds * SAMPLE_RATE as f32).round() as usize;
    let samples = Tune::new(seed).play(frames);
    let data_len = samples.len() * 2;

    // The canonical 44-byte header by hand rather than hound: it is fixed for
    // mono 16-bit PCM, and writing into a Vec then has no error path, where
    // hound's writer needs `Write + Seek` and returns a `Result` at each step.
    // The tests read the file back with hound, so the layout is still checked
    // by an independent parser.
    // The sizes fit in u32: 30 s of 16 kHz 16-bit mono is under 1 MB.
    let mut out = Vec::with_capacity(44 + data_len);
    out.extend_from_slice(b"RIFF");
    out.extend_from_slice(&(36 + data_len as u32).to_le_bytes());
    out.extend_from_slice(b"WAVE");
    out.extend_from_slice(b"fmt ");
    out.extend_from_slice(&16u32.to_le_bytes());
    out.extend_from_slice(&1u16.to_le_bytes()); // PCM
    out.extend_from_slice(&1u16.to_le_bytes()); // channels
    out.extend_from_slice(&SAMPLE_RATE.to_le_bytes());
    out.extend_from_slice(&(SAMPLE_RATE * 2).to_le_bytes()); // bytes per second
    out.extend_from_slice(&2u16.to_le_bytes()); // bytes per frame
    out.extend_from_slice(&16u16.to_le_bytes()); // bits per sample
    out.extend_from_slice(b"data");
    out.extend_from_slice(&(data_len as u32).to_le_bytes());
    for sample in samples {
        out.extend_from_slice(&sample.to_le_bytes());
    }
    out
}

/// Everything about a clip that the seed decides.
#[derive(Debug)]
struct Tune {
    rng: SplitMix64,
    /// MIDI note of the key's root.
    root: i32,
    note_seconds: f64,
}

impl Tune {
    /// Major pentatonic: no two of its notes clash, so any random walk over it
    /// sounds pleasant.
    const SCALE: [i32; 5] = [0, 2, 4, 7, 9];
    const ATTACK_SECONDS: f64 = 0.008;
    const RELEASE_SECONDS: f64 = 0.015;
    const FADE_SECONDS: f64 = 0.02;
    /// A plucked note's exponential decay, like a marimba's.
    const DECAY_PER_SECOND: f64 = 4.0;

    fn new(seed: u64) -> Self {
        let mut rng = SplitMix64(seed);
        let root = 57 + rng.below(8) as i32;
        let note_seconds = [0.2, 0.25, 0.3, 0.375][rng.below(4)];
        Self {
            rng,
            root,
            note_seconds,
        }
    }

    fn play(mut self, frames: usize) -> Vec<i16> {
        let rate = f64::from(SAMPLE_RATE);
        let note_frames = ((self.note_seconds * rate) as usize).max(1);
        let melody = self.melody(frames.div_ceil(note_frames));
        let mut drone = [
            Oscillator::new(frequency(self.root - 12)),
            Oscillator::new(frequency(self.root - 5)),
        ];
        let decay_per_frame = (-Self::DECAY_PER_SECOND / rate).exp();
        let fade_frames = (Self::FADE_SECONDS * rate).min(frames as f64 / 2.0);

        let mut samples = Vec::with_capacity(frames);
        for (note, &pitch) in melody.iter().enumerate() {
            let start = note * note_frames;
            let mut voice = Oscillator::new(pitch);
            let mut decay = 1.0;
            for i in start..(start + note_frames).min(frames) {
                let local = (i - start) as f64 / rate;
                let envelope = (local / Self::ATTACK_SECONDS).min(1.0)
                    * decay
                    * ((self.note_seconds - local) / Self::RELEASE_SECONDS).min(1.0);
                decay *= decay_per_frame;
                // The 2nd and 3rd harmonics from the fundamental's sine and
                // cosine by the multiple-angle formulas, for a warmer tone.
                let (cos, sin) = voice.next();
                let tone = sin + 0.3 * (2.0 * sin * cos) + 0.1 * sin * (3.0 - 4.0 * sin * sin);
                let pad = drone[0].next().1 + drone[1].next().1;
                // Fading the clip's ends avoids a click when playback starts or stops.
                let edge = (i.min(frames - 1 - i) as f64 / fade_frames).min(1.0);
                let level = (0.4 * envelope * tone + 0.12 * pad) * edge;
                samples.push((level.clamp(-1.0, 1.0) * f64::from(i16::MAX)) as i16);
            }
        }
        samples
    }

    /// Frequencies of `notes` notes: a walk of small steps over two octaves of
    /// the scale, because leaps sound random and steps sound like a tune.
    fn melody(&mut self, notes: usize) -> Vec<f64> {
        let degrees = 2 * Self::SCALE.len() as i32;
        let mut degree = self.rng.below(degrees as usize) as i32;
        (0..notes)
            .map(|_| {
                degree = (degree + self.rng.below(5) as i32 - 2).clamp(0, degrees - 1);
                let octave = degree / Self::SCALE.len() as i32;
                let step = Self::SCALE[(degree % Self::SCALE.len() as i32) as usize];
                frequency(self.root + 12 * octave + step)
            })
            .collect()
    }
}

/// A sine oscillator that turns a unit phasor by a fixed angle each frame:
/// a few multiplications instead of a libm `sin` per sample, which made a
/// 30-second clip take 40 ms. In f64 the phasor's drift over a clip's
/// 480,000 turns stays far below one bit of a 16-bit sample.
#[derive(Debug)]
struct Oscillator {
    cos: f64,
    sin: f64,
    step_cos: f64,
    step_sin: f64,
}

impl Oscillator {
    fn new(frequency: f64) -> Self {
        let step = TAU * frequency / f64::from(SAMPLE_RATE);
        Self {
            cos: 1.0,
            sin: 0.0,
            step_cos: step.cos(),
            step_sin: step.sin(),
        }
    }

    /// The cosine and sine of the current phase, then advances one frame.
    fn next(&mut self) -> (f64, f64) {
        let current = (self.cos, self.sin);
        self.cos = current.0 * self.step_cos - current.1 * self.step_sin;
        self.sin = current.0 * self.step_sin + current.1 * self.step_cos;
        current
    }
}

fn frequency(midi_note: i32) -> f64 {
    440.0 * 2f64.powf(f64::from(midi_note - 69) / 12.0)
}

/// SplitMix64: a few lines, and neighbouring seeds still give unrelated
/// streams, which a prompt hash does not need but a test's seed 0 and 1 do.
#[derive(Debug)]
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in 0..1.
    fn unit(&mut self) -> f32 {
        // The top 24 bits fill an f32's mantissa exactly.
        (self.next() >> 40) as f32 / (1u64 << 24) as f32
    }

    fn between(&mut self, low: f32, high: f32) -> f32 {
        low + (high - low) * self.unit()
    }

    /// Uniform in 0..bound; the modulo bias is irrelevant for bounds this small.
    fn below(&mut self, bound: usize) -> usize {
        (self.next() % bound as u64) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    fn decode_png(bytes: &[u8]) -> (png::OutputInfo, Vec<u8>) {
        let mut reader = png::Decoder::new(Cursor::new(bytes))
            .read_info()
            .expect("a PNG header");
        let mut pixels = vec![0; reader.output_buffer_size().expect("a buffer size")];
        let info = reader.next_frame(&mut pixels).expect("a PNG frame");
        pixels.truncate(info.buffer_size());
        (info, pixels)
    }

    fn read_u16(bytes: &[u8], at: usize) -> u16 {
        u16::from_le_bytes([bytes[at], bytes[at + 1]])
    }

    fn read_u32(bytes: &[u8], at: usize) -> u32 {
        u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]])
    }

    /// The top-level ISO BMFF boxes of `bytes` as (type, size), or `None` if a
    /// box's size runs past the end of the file.
    fn top_level_boxes(bytes: &[u8]) -> Option<Vec<([u8; 4], usize)>> {
        let mut boxes = Vec::new();
        let mut at = 0;
        while at < bytes.len() {
            let header = bytes.get(at..at + 8)?;
            let kind: [u8; 4] = header[4..8].try_into().ok()?;
            let size = match u32::from_be_bytes(header[0..4].try_into().ok()?) {
                0 => bytes.len() - at,
                1 => usize::try_from(u64::from_be_bytes(
                    bytes.get(at + 8..at + 16)?.try_into().ok()?,
                ))
                .ok()?,
                size => size as usize,
            };
            if size < 8 || at + size > bytes.len() {
                return None;
            }
            boxes.push((kind, size));
            at += size;
        }
        Some(boxes)
    }

    #[test]
    fn png_decodes_to_the_requested_size() {
        for (width, height) in [(512, 512), (1, 1), (37, 5), (3, 200)] {
            let (info, pixels) = decode_png(&png(42, width, height));

            assert_eq!((info.width, info.height), (width, height));
            assert_eq!(info.color_type, png::ColorType::Rgb);
            assert_eq!(info.bit_depth, png::BitDepth::Eight);
            assert_eq!(pixels.len(), width as usize * height as usize * 3);
        }
    }

    #[test]
    fn png_clamps_zero_and_huge_sizes() {
        let (tiny, _) = decode_png(&png(7, 0, 0));
        let (wide, _) = decode_png(&png(7, u32::MAX, 2));

        assert_eq!((tiny.width, tiny.height), (1, 1));
        assert_eq!((wide.width, wide.height), (MAX_IMAGE_SIDE, 2));
    }

    #[test]
    fn png_is_the_same_for_the_same_seed() {
        assert_eq!(png(u64::MAX, 64, 48), png(u64::MAX, 64, 48));
    }

    #[test]
    fn different_seeds_give_visibly_different_images() {
        for (a, b) in [
            (0, 1),
            (1, 2),
            (42, 43),
            (u64::MAX, 0),
            (0xdead_beef, 0xfeed_f00d),
        ] {
            let (_, first) = decode_png(&png(a, 128, 128));
            let (_, second) = decode_png(&png(b, 128, 128));

            let total: u64 = first
                .iter()
                .zip(&second)
                .map(|(x, y)| u64::from(x.abs_diff(*y)))
                .sum();
            let mean = total as f64 / first.len() as f64;
            assert!(
                mean > 20.0,
                "seeds {a} and {b} differ by only {mean:.1} per channel"
            );
        }
    }

    #[test]
    fn png_is_not_a_flat_colour() {
        let (_, pixels) = decode_png(&png(3, 64, 64));

        let distinct: std::collections::HashSet<&[u8]> = pixels.chunks(3).collect();
        assert!(distinct.len() > 100, "only {} colours", distinct.len());
    }

    #[test]
    fn wav_header_has_riff_wave_fmt_and_data_fields() {
        let bytes = wav(9, 2.0);

        assert_eq!(&bytes[0..4], b"RIFF");
        assert_eq!(read_u32(&bytes, 4) as usize, bytes.len() - 8);
        assert_eq!(&bytes[8..12], b"WAVE");
        assert_eq!(&bytes[12..16], b"fmt ");
        assert_eq!(read_u32(&bytes, 16), 16);
        assert_eq!(read_u16(&bytes, 20), 1, "PCM");
        assert_eq!(read_u16(&bytes, 22), 1, "mono");
        assert_eq!(read_u32(&bytes, 24), SAMPLE_RATE);
        assert_eq!(read_u32(&bytes, 28), SAMPLE_RATE * 2);
        assert_eq!(read_u16(&bytes, 32), 2);
        assert_eq!(read_u16(&bytes, 34), 16);
        assert_eq!(&bytes[36..40], b"data");
        assert_eq!(read_u32(&bytes, 40) as usize, bytes.len() - 44);
        assert_eq!(bytes.len() - 44, 2 * 2 * SAMPLE_RATE as usize);
    }

    #[test]
    fn wav_parses_with_hound_and_lasts_the_requested_seconds() {
        for seconds in [1.0, 2.5, 0.3, 30.0] {
            let reader = hound::WavReader::new(Cursor::new(wav(5, seconds))).expect("a WAV");

            let spec = reader.spec();
            assert_eq!(spec.channels, 1);
            assert_eq!(spec.sample_rate, SAMPLE_RATE);
            assert_eq!(spec.bits_per_sample, 16);
            assert_eq!(spec.sample_format, hound::SampleFormat::Int);
            assert_eq!(
                reader.duration(),
                (seconds * SAMPLE_RATE as f32).round() as u32
            );
        }
    }

    #[test]
    fn wav_is_audible_without_clipping() {
        let mut reader = hound::WavReader::new(Cursor::new(wav(11, 3.0))).expect("a WAV");
        let samples: Vec<i16> = reader
            .samples::<i16>()
            .collect::<Result<_, _>>()
            .expect("samples");

        let peak = samples.iter().map(|s| s.unsigned_abs()).max().unwrap_or(0);
        let rms = (samples.iter().map(|&s| f64::from(s).powi(2)).sum::<f64>()
            / samples.len() as f64)
            .sqrt();
        assert!(peak < i16::MAX.unsigned_abs(), "clipped at {peak}");
        assert!(rms > 1_000.0, "too quiet: rms {rms:.0}");
        assert!(samples[0].unsigned_abs() < 100 && samples[samples.len() - 1].unsigned_abs() < 100);
    }

    #[test]
    fn different_seeds_give_different_audio_and_the_same_seed_the_same() {
        assert_ne!(wav(1, 1.0), wav(2, 1.0));
        assert_eq!(wav(1, 1.0), wav(1, 1.0));
    }

    #[test]
    fn wav_of_zero_negative_or_nan_seconds_is_empty_but_valid() {
        for seconds in [0.0, -3.0, f32::NAN, f32::NEG_INFINITY] {
            let reader = hound::WavReader::new(Cursor::new(wav(1, seconds))).expect("a WAV");

            assert_eq!(reader.duration(), 0);
        }
    }

    #[test]
    fn mp4_starts_with_ftyp_and_holds_moov_and_mdat() {
        let boxes = top_level_boxes(mp4()).expect("well-formed top-level boxes");
        let kinds: Vec<&[u8; 4]> = boxes.iter().map(|(kind, _)| kind).collect();

        assert_eq!(kinds.first(), Some(&b"ftyp"));
        assert!(kinds.contains(&b"moov"), "boxes: {kinds:?}");
        assert!(kinds.contains(&b"mdat"), "boxes: {kinds:?}");
    }

    #[test]
    fn mp4_puts_moov_before_mdat_so_players_can_stream_it() {
        let boxes = top_level_boxes(mp4()).expect("well-formed top-level boxes");
        let position = |wanted: &[u8; 4]| boxes.iter().position(|(kind, _)| kind == wanted);

        assert!(position(b"moov") < position(b"mdat"));
    }

    #[test]
    fn render_clamps_odd_audio_seconds_without_panic() {
        let min = (MIN_AUDIO_SECONDS * SAMPLE_RATE as f32) as u32;
        let max = (MAX_AUDIO_SECONDS * SAMPLE_RATE as f32) as u32;
        let cases = [
            (0.0, min),
            (-1.0, min),
            (f32::NAN, min),
            (f32::NEG_INFINITY, min),
            (1e9, max),
            (f32::INFINITY, max),
            (4.0, 4 * SAMPLE_RATE),
        ];
        for (seconds, frames) in cases {
            let reader =
                hound::WavReader::new(Cursor::new(render(MediaKind::Audio, u64::MAX, seconds)))
                    .expect("a WAV");

            assert_eq!(reader.duration(), frames, "for {seconds} seconds");
        }
    }

    #[test]
    fn render_draws_a_square_image_and_serves_the_sample_video_for_any_input() {
        let (info, _) = decode_png(&render(MediaKind::Image, u64::MAX, f32::NAN));

        assert_eq!((info.width, info.height), (IMAGE_SIDE, IMAGE_SIDE));
        assert_eq!(render(MediaKind::Video, 0, f32::NAN), mp4());
    }

    #[test]
    fn each_kind_renders_a_file_matching_its_extension_and_content_type() {
        let cases = [
            (MediaKind::Image, "png", "image/png", 0, b"\x89PNG"),
            (MediaKind::Audio, "wav", "audio/wav", 0, b"RIFF"),
            (MediaKind::Video, "mp4", "video/mp4", 4, b"ftyp"),
        ];
        for (kind, extension, content_type, at, magic) in cases {
            let bytes = render(kind, 1, 1.0);

            assert_eq!(kind.extension(), extension);
            assert_eq!(kind.content_type(), content_type);
            assert_eq!(bytes.get(at..at + 4), Some(&magic[..]), "{kind:?}");
        }
    }
}
