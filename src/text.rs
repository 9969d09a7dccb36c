//! How values and file names appear in messages: long values shortened to a bounded length,
//! file names that are not UTF-8 escaped losslessly (`\xff`), what a map may name a map, group,
//! goal or spawn ([`name_problem`]), and text in a CSV cell ([`csv_cell`]).

use std::ffi::OsStr;
use std::path::Path;

/// Longest name (in characters) of a map, group, goal or spawn. Names are drawn in plot legends
/// and written into reports; a longer one is a mistake (a whole file pasted into a field).
pub const MAX_NAME_CHARS: usize = 200;

/// Most characters of one value a message shows: longer values keep their first
/// [`MESSAGE_HEAD_CHARS`] and last [`MESSAGE_TAIL_CHARS`] characters around a note of how
/// many were left out.
pub const MESSAGE_VALUE_CHARS: usize = 100;
/// Characters kept from the start of a shortened value.
pub const MESSAGE_HEAD_CHARS: usize = 60;
/// Characters kept from the end of a shortened value.
pub const MESSAGE_TAIL_CHARS: usize = 20;

/// `value` as a message shows it: itself when it has at most [`MESSAGE_VALUE_CHARS`]
/// characters, else its start and end around `…(N characters)…`, so an error about a 10 MB
/// name stays one short line. The one helper every message that echoes a value goes through.
pub fn truncate_for_message(value: &str) -> String {
    let count = value.chars().count();
    if count <= MESSAGE_VALUE_CHARS {
        return value.to_string();
    }
    let head: String = value.chars().take(MESSAGE_HEAD_CHARS).collect();
    let tail_start = value
        .char_indices()
        .nth(count - MESSAGE_TAIL_CHARS)
        .map_or(value.len(), |(i, _)| i);
    let left_out = count - MESSAGE_HEAD_CHARS - MESSAGE_TAIL_CHARS;
    format!("{head}…({left_out} characters)…{}", &value[tail_start..])
}

/// A message from elsewhere (a JSON parser's) that may quote a value, with the value shortened
/// by [`truncate_for_message`]: the text between its first and last `"` or `` ` ``, or the
/// whole message when it quotes nothing. Short messages are returned as they are.
pub fn shorten_quoted_value(message: &str) -> String {
    if message.chars().count() <= 2 * MESSAGE_VALUE_CHARS {
        return message.to_string();
    }
    let first = message.find(['"', '`']);
    let last = message.rfind(['"', '`']);
    match (first, last) {
        (Some(a), Some(b)) if b > a + 1 => format!(
            "{}{}{}",
            &message[..=a],
            truncate_for_message(&message[a + 1..b]),
            &message[b..]
        ),
        _ => truncate_for_message(message),
    }
}

/// `value` shortened by [`truncate_for_message`] and quoted as Rust's `{:?}` quotes it.
pub fn quoted(value: &str) -> String {
    format!("{:?}", truncate_for_message(value))
}

/// `name` losslessly as text: UTF-8 as it is, any byte that is not part of valid UTF-8 as
/// `\xNN`. When the name holds such a byte or the text `\x`, every backslash is doubled, so the
/// output holds `\x` exactly when it was escaped and two different names never print alike.
pub fn escape_os(name: &OsStr) -> String {
    let bytes = name.as_encoded_bytes();
    if let Ok(text) = std::str::from_utf8(bytes)
        && !text.contains("\\x")
    {
        return text.to_string();
    }
    let mut out = String::with_capacity(bytes.len() + 8);
    for chunk in bytes.utf8_chunks() {
        out.push_str(&chunk.valid().replace('\\', "\\\\"));
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    out
}

/// `path` as messages show it: [`escape_os`] of the whole path (lossless, unlike
/// `Path::display`, which turns every byte that is not UTF-8 into the same `�`).
pub fn show_path(path: &Path) -> String {
    escape_os(path.as_os_str())
}

/// Whether `ch` is a bidirectional formatting character: the embeddings and overrides U+202A to
/// U+202E and the isolates U+2066 to U+2069. In a name they make the text around it display in
/// another order than it is stored (a name that reads as one exit and is another).
pub fn is_bidi_control(ch: char) -> bool {
    matches!(ch, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// `None` when `name` is fit to show and write: at most [`MAX_NAME_CHARS`] characters, none of
/// them a control character (NUL, ESC, a line break, a tab: they garble terminals, reports and
/// CSV rows) or a bidirectional formatting character ([`is_bidi_control`]). Else the message
/// for it: the value shortened and escaped as `{:?}` escapes it, and what is wrong.
pub fn name_problem(name: &str) -> Option<String> {
    let count = name.chars().count();
    if count > MAX_NAME_CHARS {
        return Some(format!(
            "{}: {count} characters, expected at most {MAX_NAME_CHARS}",
            quoted(name)
        ));
    }
    let (at, ch) = name
        .chars()
        .enumerate()
        .find(|&(_, ch)| ch.is_control() || is_bidi_control(ch))?;
    let what = if is_bidi_control(ch) {
        "a bidirectional formatting character, which reorders the text shown around it"
    } else {
        "a control character"
    };
    Some(format!(
        "{}: character {} is U+{:04X}, {what}: expected a name of printable characters",
        quoted(name),
        at + 1,
        ch as u32
    ))
}

/// Characters that make a spreadsheet read a CSV cell starting with them as a formula
/// (OWASP, "CSV Injection"): `=`, `+`, `-`, `@`, tab and carriage return.
const FORMULA_STARTS: [char; 6] = ['=', '+', '-', '@', '\t', '\r'];

/// `value` as one CSV cell of text (a name, a path, a message), the one way every CSV file
/// crowdfield writes puts text in a cell: a value starting with a character a spreadsheet reads
/// as the start of a formula ([`FORMULA_STARTS`]) gets a `'` in front (the OWASP advice, so
/// `=HYPERLINK(...)` shows as text), and a value holding a comma, quote or line break is quoted
/// with its quotes doubled (RFC 4180). Numbers are written as they are, not through this.
pub fn csv_cell(value: &str) -> String {
    let text = if value.starts_with(FORMULA_STARTS) {
        format!("'{value}")
    } else {
        value.to_string()
    };
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_values_keep_their_ends_and_say_what_was_left_out() {
        assert_eq!(truncate_for_message("short"), "short");
        let exact = "x".repeat(MESSAGE_VALUE_CHARS);
        assert_eq!(truncate_for_message(&exact), exact);
        let long = format!("{}{}", "a".repeat(500), "é".repeat(30));
        let shown = truncate_for_message(&long);
        assert!(shown.starts_with(&"a".repeat(MESSAGE_HEAD_CHARS)), "{shown}");
        assert!(shown.ends_with(&"é".repeat(MESSAGE_TAIL_CHARS)), "{shown}");
        assert!(shown.contains("…(450 characters)…"), "{shown}");
        assert!(shown.chars().count() < MESSAGE_VALUE_CHARS + 25);
    }

    #[cfg(unix)]
    #[test]
    fn names_that_are_not_utf8_are_escaped_losslessly() {
        use std::os::unix::ffi::OsStrExt;
        let a = OsStr::from_bytes(b"hall\xff");
        let b = OsStr::from_bytes(b"hall\xfe");
        assert_eq!(escape_os(a), "hall\\xff");
        assert_ne!(escape_os(a), escape_os(b));
        assert_eq!(escape_os(OsStr::new("plain")), "plain");
        // A name that spells the escape itself differs from one holding the byte.
        assert_ne!(
            escape_os(OsStr::from_bytes(b"\\xff\xfe")),
            escape_os(OsStr::from_bytes(b"\xff\xfe"))
        );
        assert_ne!(escape_os(OsStr::new("hall\\xff")), escape_os(a));
    }

    #[test]
    fn quoted_values_in_parser_messages_are_shortened() {
        let long = "x".repeat(100_000);
        let m = shorten_quoted_value(&format!("invalid type: string \"{long}\", expected f64"));
        assert!(
            m.starts_with("invalid type: string \"xxx") && m.ends_with("\", expected f64"),
            "{m}"
        );
        assert!(m.len() < 200, "{m}");
        assert_eq!(
            shorten_quoted_value("missing field `name`"),
            "missing field `name`"
        );
    }

    #[test]
    fn names_of_control_or_bidi_characters_are_refused_and_shown_escaped() {
        assert!(name_problem("north exit (Ausgang Nord, 北口)").is_none());
        let e = name_problem("exit\u{1b}[31m").unwrap();
        assert!(
            e.starts_with(r#""exit\u{1b}[31m": character 5 is U+001B, a control character"#),
            "{e}"
        );
        let e = name_problem("a\0b").unwrap();
        assert!(e.starts_with(r#""a\0b": character 2 is U+0000"#), "{e}");
        for bidi in ['\u{202A}', '\u{202E}', '\u{2066}', '\u{2069}'] {
            let e = name_problem(&format!("exit{bidi}1")).unwrap();
            assert!(
                e.contains(&format!("U+{:04X}, a bidirectional", bidi as u32)) && !e.contains(bidi),
                "{e}"
            );
        }
        assert!(name_problem("tab\there").is_some() && name_problem("line\nbreak").is_some());
    }

    #[test]
    fn csv_cells_that_a_spreadsheet_would_run_start_with_a_quote() {
        assert_eq!(csv_cell("north exit"), "north exit");
        assert_eq!(csv_cell("=HYPERLINK(\"x\")"), "\"'=HYPERLINK(\"\"x\"\")\"");
        assert_eq!(csv_cell("+1"), "'+1");
        assert_eq!(csv_cell("-exit"), "'-exit");
        assert_eq!(csv_cell("@SUM(A1)"), "'@SUM(A1)");
        assert_eq!(csv_cell("a,b"), "\"a,b\"");
        assert_eq!(csv_cell("say \"x\""), "\"say \"\"x\"\"\"");
        assert_eq!(csv_cell("exit-2"), "exit-2", "only the first character counts");
    }

    #[test]
    fn names_have_a_bounded_length() {
        assert!(name_problem(&"n".repeat(MAX_NAME_CHARS)).is_none());
        let e = name_problem(&"n".repeat(10_000_000)).unwrap();
        assert!(
            e.contains("10000000 characters, expected at most 200"),
            "{}",
            &e[..200.min(e.len())]
        );
        assert!(e.len() < 300);
    }
}
