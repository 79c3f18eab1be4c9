//! The way out of a session: the [`Emitter`], the single path from a session's tasks to its
//! sink, which coalesces output into bounded batches (so a flood is slowed by backpressure
//! instead of growing memory); and, for agents whose turns are processes, reading their pipes
//! without ever blocking the runtime and keeping the tails a turn's last message and error
//! come from.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;

use super::ansi::AnsiText;
use super::redact::{open_tail, Redact};
use super::{EventSink, ProviderEvent};
use crate::model::{ItemKind, NewItem, StyledRun, TermStyle};

/// Output is sent at the latest this long after it was read.
const BATCH_DELAY: Duration = Duration::from_millis(40);
/// A batch is sent as soon as it holds this much text.
const BATCH_BYTES: usize = 64 * 1024;
/// One output item holds at most this much text; longer output is split into several items.
const ITEM_BYTES: usize = 16 * 1024;
/// The tail of a turn's output that becomes its last message (SPEC 8: at most 4,000 chars).
pub const LAST_MESSAGE_CHARS: usize = 4000;
/// The tail of stderr kept for error messages.
const STDERR_TAIL_CHARS: usize = 1500;

/// Keeps the last `cap` characters of a text stream.
#[derive(Debug)]
pub struct Tail {
    cap: usize,
    buf: String,
}

impl Tail {
    pub fn new(cap: usize) -> Self {
        Tail {
            cap,
            buf: String::new(),
        }
    }
    pub fn push(&mut self, s: &str) {
        self.buf.push_str(s);
        // Trim only when well past the cap, so pushing is amortised O(len).
        if self.buf.len() > self.cap * 8 + 4096 {
            self.trim();
        }
    }
    fn trim(&mut self) {
        let chars = self.buf.chars().count();
        if chars > self.cap {
            let cut = self
                .buf
                .char_indices()
                .nth(chars - self.cap)
                .map(|(i, _)| i)
                .unwrap_or(0);
            self.buf.drain(..cut);
        }
    }
    pub fn take(&mut self) -> String {
        self.trim();
        std::mem::take(&mut self.buf)
    }
}

/// Decodes a chunk of a byte stream as UTF-8, keeping an incomplete trailing sequence for the
/// next chunk and replacing invalid bytes.
fn decode_utf8(carry: &mut Vec<u8>, data: &[u8]) -> String {
    carry.extend_from_slice(data);
    let mut out = String::new();
    let mut rest: &[u8] = carry;
    loop {
        match std::str::from_utf8(rest) {
            Ok(s) => {
                out.push_str(s);
                rest = &[];
                break;
            }
            Err(e) => {
                let (good, bad) = rest.split_at(e.valid_up_to());
                out.push_str(std::str::from_utf8(good).unwrap_or_default());
                match e.error_len() {
                    Some(n) => {
                        out.push('\u{FFFD}');
                        rest = &bad[n..];
                    }
                    None => {
                        rest = bad;
                        break;
                    }
                }
            }
        }
    }
    let keep = rest.to_vec();
    *carry = keep;
    out
}

enum Emit {
    Output { stream: &'static str, data: Vec<u8> },
    Item(NewItem),
    Event(ProviderEvent),
    TakeTails(oneshot::Sender<(String, String)>),
}

/// The single path from a session's tasks to its sink. Output chunks and timeline items are
/// coalesced into `Items` batches (sent when a batch holds `BATCH_BYTES` or `BATCH_DELAY` after
/// its first content); any other event first flushes the pending batch, so order is kept.
/// The channel in is small and the sink is bounded, so a slow runtime slows the producers.
#[derive(Clone)]
pub struct Emitter {
    tx: mpsc::Sender<Emit>,
}

impl Emitter {
    pub fn spawn(sink: EventSink) -> Emitter {
        let (tx, rx) = mpsc::channel(8);
        tokio::spawn(coalesce(rx, sink));
        Emitter { tx }
    }
    /// Raw process output of `stream` ("stdout" / "stderr").
    pub async fn output(&self, stream: &'static str, data: Vec<u8>) -> bool {
        self.tx.send(Emit::Output { stream, data }).await.is_ok()
    }
    pub async fn item(&self, item: NewItem) -> bool {
        self.tx.send(Emit::Item(item)).await.is_ok()
    }
    pub async fn event(&self, event: ProviderEvent) -> bool {
        self.tx.send(Emit::Event(event)).await.is_ok()
    }
    /// Sends events in order: items go through the batcher, everything else as an event.
    /// False once the sink is gone.
    pub async fn send_all(&self, events: Vec<ProviderEvent>) -> bool {
        for event in events {
            let sent = match event {
                ProviderEvent::Items(items) => self.items(items).await,
                other => self.event(other).await,
            };
            if !sent {
                return false;
            }
        }
        true
    }
    async fn items(&self, items: Vec<NewItem>) -> bool {
        for item in items {
            if !self.item(item).await {
                return false;
            }
        }
        true
    }
    /// The tail of all output since the last call (what a shell turn's last message is) and
    /// the tail of its stderr; resets both.
    pub async fn take_tails(&self) -> (String, String) {
        let (tx, rx) = oneshot::channel();
        if self.tx.send(Emit::TakeTails(tx)).await.is_err() {
            return Default::default();
        }
        rx.await.unwrap_or_default()
    }
}

struct Batch {
    items: Vec<NewItem>,
    bytes: usize,
    deadline: Option<Instant>,
}

/// Appends `text` in `style` to an output item, keeping its runs covering its text (an item
/// stays without runs while all of it is plain).
fn push_styled(item: &mut NewItem, text: &str, style: TermStyle) {
    if text.is_empty() {
        return;
    }
    if item.runs.is_empty() && style.is_plain() {
        item.text.push_str(text);
        return;
    }
    if item.runs.is_empty() && !item.text.is_empty() {
        item.runs.push(StyledRun {
            len: count(&item.text),
            style: TermStyle::default(),
        });
    }
    item.text.push_str(text);
    let len = count(text);
    match item.runs.last_mut() {
        Some(run) if run.style == style => run.len = run.len.saturating_add(len),
        _ => item.runs.push(StyledRun { len, style }),
    }
}

fn count(text: &str) -> u32 {
    u32::try_from(text.chars().count()).unwrap_or(u32::MAX)
}

impl Batch {
    /// Adds parsed output: `text` styled by `runs` (plain when empty).
    fn add_styled(&mut self, stream: &'static str, text: &str, runs: &[StyledRun]) {
        if runs.is_empty() {
            self.add_output(stream, text, TermStyle::default());
            return;
        }
        let mut rest = text;
        for run in runs {
            let end = rest
                .char_indices()
                .nth(run.len as usize)
                .map_or(rest.len(), |(i, _)| i);
            self.add_output(stream, &rest[..end], run.style);
            rest = &rest[end..];
        }
        // Runs always cover the text; anything past them would be shown plain.
        self.add_output(stream, rest, TermStyle::default());
    }

    fn add_output(&mut self, stream: &'static str, mut text: &str, style: TermStyle) {
        while !text.is_empty() {
            let fits = self.items.last().is_some_and(|it| {
                it.kind == ItemKind::Output
                    && it.stream.as_deref() == Some(stream)
                    && it.text.len() < ITEM_BYTES
            });
            let used = if fits {
                self.items.last().map_or(0, |it| it.text.len())
            } else {
                0
            };
            let mut cut = text.len().min(ITEM_BYTES - used);
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            let fresh = !fits || cut == 0;
            if cut == 0 {
                // A single character wider than the room left: it starts a new item.
                cut = text
                    .char_indices()
                    .nth(1)
                    .map(|(i, _)| i)
                    .unwrap_or(text.len());
            }
            if fresh {
                self.items.push(NewItem::output(stream, ""));
            }
            if let Some(item) = self.items.last_mut() {
                push_styled(item, &text[..cut], style);
            }
            self.bytes += cut;
            text = &text[cut..];
        }
    }
}

/// The decoded output of the two streams on its way into the batch: tokens redacted, and the
/// end of each stream held back while it could be the start of a token the next read
/// completes (see [`super::redact`]).
struct Streams {
    carries: [Vec<u8>; 2],
    held: [String; 2],
    /// Each stream's terminal state: its escape sequences become styles (or are dropped).
    terms: [AnsiText; 2],
    redactor: Option<Arc<dyn Redact>>,
    all_tail: Tail,
    err_tail: Tail,
}

impl Streams {
    fn push(&mut self, batch: &mut Batch, idx: usize, data: &[u8]) {
        let mut text = std::mem::take(&mut self.held[idx]);
        text.push_str(&decode_utf8(&mut self.carries[idx], data));
        if let Some(r) = &self.redactor {
            if let Some(clean) = r.redact(&text) {
                text = clean;
            }
            if let Some(at) = open_tail(&text, HOLD_BYTES) {
                self.held[idx] = text.split_off(at);
            }
        }
        self.add(batch, idx, &text);
    }

    fn add(&mut self, batch: &mut Batch, idx: usize, text: &str) {
        if text.is_empty() {
            return;
        }
        let (plain, runs) = self.terms[idx].feed(text.as_bytes());
        if plain.is_empty() {
            return;
        }
        self.all_tail.push(&plain);
        if idx == 1 {
            self.err_tail.push(&plain);
        }
        batch.add_styled(STREAMS[idx], &plain, &runs);
    }

    /// Lets what is held back go (no more output is coming soon, or something else must follow
    /// it in order).
    fn release(&mut self, batch: &mut Batch) {
        for idx in 0..2 {
            let held = std::mem::take(&mut self.held[idx]);
            self.add(batch, idx, &held);
        }
    }

    fn holding(&self) -> bool {
        self.held.iter().any(|h| !h.is_empty())
    }
}

/// Stream names by index.
const STREAMS: [&str; 2] = ["stdout", "stderr"];
/// The most output held back at a stream's end: more than any token the app issues.
const HOLD_BYTES: usize = 128;

async fn coalesce(mut rx: mpsc::Receiver<Emit>, sink: EventSink) {
    let mut batch = Batch {
        items: Vec::new(),
        bytes: 0,
        deadline: None,
    };
    let mut streams = Streams {
        carries: [Vec::new(), Vec::new()],
        held: [String::new(), String::new()],
        terms: Default::default(),
        redactor: sink.redactor(),
        all_tail: Tail::new(LAST_MESSAGE_CHARS),
        err_tail: Tail::new(STDERR_TAIL_CHARS),
    };

    async fn flush(batch: &mut Batch, sink: &EventSink) -> bool {
        batch.deadline = None;
        batch.bytes = 0;
        if batch.items.is_empty() {
            return true;
        }
        let items = std::mem::take(&mut batch.items);
        sink.send(ProviderEvent::Items(items)).await
    }

    loop {
        let msg = match batch.deadline {
            Some(deadline) => tokio::select! {
                m = rx.recv() => m,
                _ = tokio::time::sleep_until(deadline) => {
                    streams.release(&mut batch);
                    if !flush(&mut batch, &sink).await { return; }
                    continue;
                }
            },
            None => rx.recv().await,
        };
        let Some(msg) = msg else {
            streams.release(&mut batch);
            flush(&mut batch, &sink).await;
            return;
        };
        match msg {
            Emit::Output { stream, data } => {
                streams.push(&mut batch, usize::from(stream == "stderr"), &data);
            }
            Emit::Item(item) => {
                batch.bytes += item.text.len() + 64;
                batch.items.push(item);
            }
            Emit::Event(event) => {
                streams.release(&mut batch);
                if !flush(&mut batch, &sink).await || !sink.send(event).await {
                    return;
                }
                continue;
            }
            Emit::TakeTails(reply) => {
                for idx in 0..2 {
                    let rest = std::mem::take(&mut streams.carries[idx]);
                    if !rest.is_empty() {
                        // Invalid UTF-8 at the very end: replaced, not kept for a next chunk.
                        let rest = String::from_utf8_lossy(&rest).into_owned();
                        streams.push(&mut batch, idx, rest.as_bytes());
                    }
                }
                streams.release(&mut batch);
                // The next turn's output starts in a fresh terminal.
                streams.terms.iter_mut().for_each(AnsiText::reset);
                let tails = (streams.all_tail.take(), streams.err_tail.take());
                let _ = reply.send(tails);
                continue;
            }
        }
        if batch.bytes >= BATCH_BYTES && !flush(&mut batch, &sink).await {
            return;
        }
        if batch.deadline.is_none() && (!batch.items.is_empty() || streams.holding()) {
            batch.deadline = Some(Instant::now() + BATCH_DELAY);
        }
    }
}

/// What a command's output readers tell the turn's end: bytes read so far, and how many readers
/// are handing a chunk to the emitter (waiting on the runtime, not on the pipe).
#[derive(Debug, Default)]
pub struct Progress {
    bytes: AtomicU64,
    delivering: std::sync::atomic::AtomicUsize,
}

/// Reads a pipe to its end and hands every chunk to the emitter as output of `stream`.
/// `progress` tells a caller a draining pipe from an idle one.
pub async fn pump_output<R: AsyncRead + Unpin>(
    mut reader: R,
    stream: &'static str,
    emitter: Emitter,
    progress: Arc<Progress>,
) {
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        match reader.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                progress.bytes.fetch_add(n as u64, Ordering::Relaxed);
                progress.delivering.fetch_add(1, Ordering::Relaxed);
                let sent = emitter.output(stream, buf[..n].to_vec()).await;
                progress.delivering.fetch_sub(1, Ordering::Relaxed);
                if !sent {
                    return;
                }
            }
        }
    }
}

/// The longest a turn's end waits on readers that are still handing output to a runtime too
/// busy to take it.
const DELIVERY_WAIT: Duration = Duration::from_secs(10);

/// After a process exited, waits for its output readers to reach the end of their pipes. A
/// grandchild that keeps a pipe open would hold them forever, so the wait ends once no bytes
/// have arrived for a short while and no reader is handing a chunk on (a reader waiting on a
/// busy runtime has more to read: stopping it then lost the end of a fast stream's output).
/// Readers still running then are stopped, so nothing they read later leaks past the turn.
pub async fn drain_readers(handles: Vec<tokio::task::JoinHandle<()>>, progress: &Progress) {
    let aborts: Vec<_> = handles.iter().map(|h| h.abort_handle()).collect();
    let all = futures::future::join_all(handles);
    tokio::pin!(all);
    let mut seen = progress.bytes.load(Ordering::Relaxed);
    let give_up = tokio::time::Instant::now() + DELIVERY_WAIT;
    loop {
        tokio::select! {
            _ = &mut all => return,
            _ = tokio::time::sleep(Duration::from_millis(300)) => {
                let now = progress.bytes.load(Ordering::Relaxed);
                let delivering = progress.delivering.load(Ordering::Relaxed) > 0;
                if now == seen && (!delivering || tokio::time::Instant::now() >= give_up) {
                    tracing::debug!("output pipes still open after exit (a background process holds them); not waiting");
                    aborts.iter().for_each(|a| a.abort());
                    return;
                }
                seen = now;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf8_split_across_chunks_is_kept_whole() {
        let s = "héllo→x";
        let bytes = s.as_bytes();
        let mut carry = Vec::new();
        let mut out = String::new();
        for b in bytes {
            out.push_str(&decode_utf8(&mut carry, &[*b]));
        }
        assert_eq!(out, s);
        assert!(carry.is_empty());
        let mut carry = Vec::new();
        assert_eq!(decode_utf8(&mut carry, b"a\xffb"), "a\u{FFFD}b");
    }

    #[test]
    fn tail_keeps_the_last_characters() {
        let mut t = Tail::new(5);
        for _ in 0..10_000 {
            t.push("abc→");
        }
        assert_eq!(t.take(), "→abc→");
    }

    /// Replaces one fixed hex secret, as the MCP token registry does for live tokens.
    struct OneSecret(&'static str);

    impl Redact for OneSecret {
        fn redact(&self, text: &str) -> Option<String> {
            text.contains(self.0)
                .then(|| text.replace(self.0, super::super::redact::REDACTED))
        }
    }

    /// SPEC 16: a token split across two pipe reads is held back and redacted whole; an open
    /// end is let go when nothing follows.
    #[test]
    fn a_token_split_across_reads_is_still_redacted() {
        let mut batch = Batch {
            items: Vec::new(),
            bytes: 0,
            deadline: None,
        };
        let mut streams = Streams {
            carries: [Vec::new(), Vec::new()],
            held: [String::new(), String::new()],
            terms: Default::default(),
            redactor: Some(Arc::new(OneSecret("0123456789abcdef"))),
            all_tail: Tail::new(LAST_MESSAGE_CHARS),
            err_tail: Tail::new(STDERR_TAIL_CHARS),
        };
        streams.push(&mut batch, 0, b"TOKEN=01234567");
        streams.push(&mut batch, 0, b"89abcdef\nnext ");
        streams.push(&mut batch, 0, b"cafe");
        assert_eq!(batch.items[0].text, "TOKEN=[redacted]\nnext ");
        assert!(streams.holding());
        streams.release(&mut batch);
        assert_eq!(batch.items[0].text, "TOKEN=[redacted]\nnext cafe");
        assert_eq!(streams.all_tail.take(), "TOKEN=[redacted]\nnext cafe");
    }

    /// Styled output cut into bounded items: each item's runs cover exactly its text, and the
    /// styles read back in order are the ones written.
    #[test]
    fn styled_output_keeps_its_runs_across_item_cuts() {
        let mut b = Batch {
            items: Vec::new(),
            bytes: 0,
            deadline: None,
        };
        let mut term = AnsiText::new();
        let mut raw = String::from("plain ");
        raw.push_str("\x1b[31m");
        raw.push_str(&"é".repeat(ITEM_BYTES / 2 + 7));
        raw.push_str("\x1b[0m tail");
        let (text, runs) = term.feed(raw.as_bytes());
        b.add_styled("stdout", &text, &runs);
        assert_eq!(b.items.len(), 2);
        let mut styles = Vec::new();
        for it in &b.items {
            let covered: u32 = it.runs.iter().map(|r| r.len).sum();
            assert_eq!(covered as usize, it.text.chars().count());
            styles.extend(it.runs.iter().map(|r| (r.style.fg, r.len)));
        }
        let red = Some(crate::model::TermColor::Palette(1));
        assert_eq!(styles.first(), Some(&(None, 6)));
        assert_eq!(styles.last(), Some(&(None, 5)));
        let red_chars: u32 = styles.iter().filter(|s| s.0 == red).map(|s| s.1).sum();
        assert_eq!(red_chars as usize, ITEM_BYTES / 2 + 7);
        let joined: String = b.items.iter().map(|i| i.text.as_str()).collect();
        assert_eq!(joined, text);
        assert!(!joined.contains('\x1b'));
    }

    #[test]
    fn batches_split_output_into_bounded_items() {
        let mut b = Batch {
            items: Vec::new(),
            bytes: 0,
            deadline: None,
        };
        let plain = TermStyle::default();
        b.add_output("stdout", &"x".repeat(ITEM_BYTES * 2 + 10), plain);
        b.add_output("stderr", "e", plain);
        b.add_output("stdout", "y", plain);
        let lens: Vec<_> = b.items.iter().map(|i| i.text.len()).collect();
        assert_eq!(lens, [ITEM_BYTES, ITEM_BYTES, 10, 1, 1]);
        assert_eq!(b.bytes, ITEM_BYTES * 2 + 12);
    }
}
