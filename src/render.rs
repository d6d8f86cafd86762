//! Render stage: raw terminal output bytes → the text a terminal displayed.
//! (Interim line renderer; replaced by the full screen model.)

/// Renders `bytes` as lines: CR, BS, erase-in-line and LF resolved, other escapes dropped.
pub fn render(bytes: &[u8], _cols: u16, _rows: u16) -> Vec<String> {
    let text = String::from_utf8_lossy(bytes);
    let mut lines = vec![Vec::<char>::new()];
    let mut col = 0usize;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        let line = lines.last_mut().unwrap();
        match c {
            '\n' => {
                lines.push(Vec::new());
                col = 0;
            }
            '\r' => col = 0,
            '\x08' => col = col.saturating_sub(1),
            '\x1b' => {
                if chars.peek() == Some(&'[') {
                    chars.next();
                    let mut params = String::new();
                    for p in chars.by_ref() {
                        if ('@'..='~').contains(&p) {
                            if p == 'K' && params.is_empty() {
                                line.truncate(col);
                            }
                            break;
                        }
                        params.push(p);
                    }
                } else if chars.peek() == Some(&']') {
                    for p in chars.by_ref() {
                        if p == '\x07' || p == '\\' {
                            break;
                        }
                    }
                } else {
                    chars.next();
                }
            }
            c if c.is_control() && c != '\t' => {}
            c => {
                while line.len() < col {
                    line.push(' ');
                }
                if col < line.len() {
                    line[col] = c;
                } else {
                    line.push(c);
                }
                col += 1;
            }
        }
    }
    let mut out: Vec<String> = lines
        .into_iter()
        .map(|l| l.into_iter().collect::<String>().trim_end().to_string())
        .collect();
    while out.last().is_some_and(|l| l.is_empty()) {
        out.pop();
    }
    out
}
