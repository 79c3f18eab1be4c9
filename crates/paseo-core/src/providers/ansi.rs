//! Process output as a terminal shows it: colours and styles (SGR sequences) become
//! [`StyledRun`]s over plain text, and every other control sequence (cursor moves, clears,
//! window titles, hyperlinks) is dropped, so the timeline never shows escape bytes.
//!
//! The byte-level state machine is `anstyle-parse` (the ECMA-48 / VT500 parser behind
//! `anstream`), built with its `core` feature so an operating-system command an agent never
//! terminates is held in a fixed 1 KiB buffer instead of growing memory. The parser keeps its
//! state between chunks, so a sequence split across two pipe reads is still understood.

use anstyle_parse::{DefaultCharAccumulator, Params, Parser, Perform};

use crate::model::{StyledRun, TermColor, TermStyle};

/// One stream's terminal state: the parser and the style in force.
#[derive(Default)]
pub struct AnsiText {
    parser: Parser<DefaultCharAccumulator>,
    out: Out,
}

/// What the parser produced since the last [`AnsiText::feed`].
#[derive(Default)]
struct Out {
    style: TermStyle,
    text: String,
    runs: Vec<StyledRun>,
}

impl AnsiText {
    pub fn new() -> Self {
        Self::default()
    }

    /// Parses `data` (the next bytes of the stream) into its printable text and the runs that
    /// style it. The runs are empty when all of the text is plain.
    pub fn feed(&mut self, data: &[u8]) -> (String, Vec<StyledRun>) {
        for &b in data {
            self.parser.advance(&mut self.out, b);
        }
        let text = std::mem::take(&mut self.out.text);
        let mut runs = std::mem::take(&mut self.out.runs);
        if runs.iter().all(|r| r.style.is_plain()) {
            runs.clear();
        }
        (text, runs)
    }

    /// Forgets any half-read sequence and the style in force: a new turn starts plain, as a
    /// fresh terminal would.
    pub fn reset(&mut self) {
        *self = Self::default();
    }
}

impl Out {
    fn push(&mut self, c: char) {
        self.text.push(c);
        match self.runs.last_mut() {
            Some(run) if run.style == self.style => run.len += 1,
            _ => self.runs.push(StyledRun {
                len: 1,
                style: self.style,
            }),
        }
    }
}

impl Perform for Out {
    fn print(&mut self, c: char) {
        self.push(c);
    }

    fn execute(&mut self, byte: u8) {
        // Line feeds and tabs are text; a carriage return, bell, backspace or shift is
        // terminal control with nothing to show in a scrolling log.
        match byte {
            b'\n' => self.push('\n'),
            b'\t' => self.push('\t'),
            _ => {}
        }
    }

    fn csi_dispatch(&mut self, params: &Params, intermediates: &[u8], ignore: bool, action: u8) {
        if action == b'm' && intermediates.is_empty() && !ignore {
            let params: Vec<&[u16]> = params.iter().collect();
            sgr(&mut self.style, &params);
        }
    }
}

/// Applies one SGR sequence's parameters to `style`.
fn sgr(style: &mut TermStyle, params: &[&[u16]]) {
    if params.is_empty() {
        *style = TermStyle::default();
        return;
    }
    let mut i = 0;
    while i < params.len() {
        let param = params[i];
        let code = param.first().copied().unwrap_or(0);
        i += 1;
        match code {
            0 => *style = TermStyle::default(),
            1 => style.bold = true,
            2 => style.dim = true,
            3 => style.italic = true,
            // `4:0` is "no underline" in the colon form.
            4 => style.underline = param.get(1).is_none_or(|&sub| sub != 0),
            7 => style.inverse = true,
            9 => style.strike = true,
            21 => style.underline = true,
            22 => {
                style.bold = false;
                style.dim = false;
            }
            23 => style.italic = false,
            24 => style.underline = false,
            27 => style.inverse = false,
            29 => style.strike = false,
            30..=37 => style.fg = Some(TermColor::Palette((code - 30) as u8)),
            39 => style.fg = None,
            40..=47 => style.bg = Some(TermColor::Palette((code - 40) as u8)),
            49 => style.bg = None,
            90..=97 => style.fg = Some(TermColor::Palette((code - 90 + 8) as u8)),
            100..=107 => style.bg = Some(TermColor::Palette((code - 100 + 8) as u8)),
            38 | 48 => {
                let color = if param.len() > 1 {
                    extended(&param[1..])
                } else {
                    // The semicolon form: the colour's parts are the next parameters.
                    let rest: Vec<u16> = params[i..]
                        .iter()
                        .map(|p| p.first().copied().unwrap_or(0))
                        .collect();
                    let (color, used) = extended_semicolon(&rest);
                    i += used;
                    color
                };
                if let Some(color) = color {
                    if code == 38 {
                        style.fg = Some(color);
                    } else {
                        style.bg = Some(color);
                    }
                }
            }
            _ => {}
        }
    }
}

/// `5:n` or `2:r:g:b` (or `2:colourspace:r:g:b`), the colon form of an extended colour.
fn extended(sub: &[u16]) -> Option<TermColor> {
    match sub {
        [5, n, ..] => u8::try_from(*n).ok().map(TermColor::Palette),
        [2, _, r, g, b, ..] | [2, r, g, b] => rgb(*r, *g, *b),
        _ => None,
    }
}

/// `5;n` or `2;r;g;b`: the colour and how many parameters it used.
fn extended_semicolon(rest: &[u16]) -> (Option<TermColor>, usize) {
    match rest {
        [5, n, ..] => (u8::try_from(*n).ok().map(TermColor::Palette), 2),
        [2, r, g, b, ..] => (rgb(*r, *g, *b), 4),
        [] => (None, 0),
        _ => (None, 1),
    }
}

fn rgb(r: u16, g: u16, b: u16) -> Option<TermColor> {
    Some(TermColor::Rgb([
        u8::try_from(r).ok()?,
        u8::try_from(g).ok()?,
        u8::try_from(b).ok()?,
    ]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn styled(style: TermStyle, len: u32) -> StyledRun {
        StyledRun { len, style }
    }

    fn fg(c: TermColor) -> TermStyle {
        TermStyle {
            fg: Some(c),
            ..TermStyle::default()
        }
    }

    #[test]
    fn colours_and_styles_become_runs_over_plain_text() {
        let mut a = AnsiText::new();
        let (text, runs) = a.feed(b"ok \x1b[31mred\x1b[0m \x1b[1;4;92mbold\x1b[22m!\x1b[m.");
        assert_eq!(text, "ok red bold!.");
        let green = TermStyle {
            fg: Some(TermColor::Palette(10)),
            bold: true,
            underline: true,
            ..TermStyle::default()
        };
        let green_thin = TermStyle {
            bold: false,
            ..green
        };
        assert_eq!(
            runs,
            [
                styled(TermStyle::default(), 3),
                styled(fg(TermColor::Palette(1)), 3),
                styled(TermStyle::default(), 1),
                styled(green, 4),
                styled(green_thin, 1),
                styled(TermStyle::default(), 1),
            ]
        );
    }

    #[test]
    fn plain_text_has_no_runs() {
        let mut a = AnsiText::new();
        assert_eq!(
            a.feed("héllo\n\tworld".as_bytes()),
            ("héllo\n\tworld".into(), vec![])
        );
    }

    #[test]
    fn palette_256_and_truecolour_in_both_notations() {
        let mut a = AnsiText::new();
        let (text, runs) = a.feed(
            b"\x1b[38;5;196ma\x1b[48;2;1;2;3mb\x1b[0;38:5:21mc\x1b[38:2::4:5:6md\x1b[38:2:7:8:9;1me",
        );
        assert_eq!(text, "abcde");
        let lens: Vec<_> = runs.iter().map(|r| r.len).collect();
        assert_eq!(lens, [1, 1, 1, 1, 1]);
        assert_eq!(runs[0].style, fg(TermColor::Palette(196)));
        assert_eq!(
            runs[1].style,
            TermStyle {
                bg: Some(TermColor::Rgb([1, 2, 3])),
                ..fg(TermColor::Palette(196))
            }
        );
        assert_eq!(runs[2].style, fg(TermColor::Palette(21)));
        assert_eq!(runs[3].style, fg(TermColor::Rgb([4, 5, 6])));
        assert_eq!(
            runs[4].style,
            TermStyle {
                bold: true,
                ..fg(TermColor::Rgb([7, 8, 9]))
            }
        );
    }

    #[test]
    fn other_control_sequences_are_dropped() {
        let mut a = AnsiText::new();
        let input = b"\x1b[2J\x1b[H\x1b[10;20Hat\x1b[3A\x1b[K\x1b[?25l\x1b]0;title\x07\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\\r\n\x08\x07done\x1b(B\x1b7";
        let (text, runs) = a.feed(input);
        assert_eq!(text, "atlink\ndone");
        assert!(runs.is_empty(), "{runs:?}");
    }

    #[test]
    fn a_sequence_split_across_chunks_is_still_understood() {
        let whole = "a\x1b[38;5;208mé→\x1b[0mz".as_bytes();
        // Each character's style (a chunk without runs is plain).
        let per_char = |text: &str, runs: &[StyledRun]| -> Vec<TermStyle> {
            if runs.is_empty() {
                return vec![TermStyle::default(); text.chars().count()];
            }
            runs.iter()
                .flat_map(|r| std::iter::repeat_n(r.style, r.len as usize))
                .collect()
        };
        let mut one = AnsiText::new();
        let expected = one.feed(whole);
        let expected_styles = per_char(&expected.0, &expected.1);
        // Every split point, byte by byte: the parser carries half a sequence (or half a UTF-8
        // character) to the next chunk.
        for cut in 1..whole.len() {
            let mut a = AnsiText::new();
            let (t1, r1) = a.feed(&whole[..cut]);
            let (t2, r2) = a.feed(&whole[cut..]);
            assert_eq!(format!("{t1}{t2}"), expected.0, "cut at {cut}");
            let mut styles = per_char(&t1, &r1);
            styles.extend(per_char(&t2, &r2));
            assert_eq!(styles, expected_styles, "cut at {cut}");
        }
        assert_eq!(expected.0, "aé→z");
    }

    #[test]
    fn the_style_carries_over_chunks_until_reset() {
        let mut a = AnsiText::new();
        a.feed(b"\x1b[1m");
        let (_, runs) = a.feed(b"x");
        assert!(runs[0].style.bold);
        a.reset();
        assert_eq!(a.feed(b"x"), ("x".into(), vec![]));
    }

    #[test]
    fn an_unterminated_osc_is_bounded() {
        let mut a = AnsiText::new();
        a.feed(b"\x1b]0;");
        for _ in 0..1000 {
            a.feed(&[b'x'; 4096]);
        }
        a.feed(b"\x07");
        assert_eq!(a.feed(b"after").0, "after");
    }
}
