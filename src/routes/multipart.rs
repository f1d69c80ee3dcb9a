//! Multipart bodies read with bounds on the raw bytes, not only on the parsed fields.
//!
//! The multipart parser (multer, under axum's `Multipart`) keeps every byte it has read
//! while it waits for something it needs: the first boundary, the blank line that ends a
//! part's headers. A body whose boundary never comes would grow it by its whole size, and
//! every new chunk makes it search the whole buffer again. So the raw body is wrapped in a
//! [`MeteredBody`] that counts what it hands the parser, and the reader ([`MeteredForm`])
//! marks each time the parser hands something back (a new field, a chunk of one). The
//! difference is what the parser holds:
//!
//! - over [`BodyLimits::backlog`], the body stops handing out bytes and asks to be polled
//!   again at once: a parser that is only busy gives a chunk back in between; a parser that
//!   is stuck asks for more bytes without giving any back, and the body is refused
//!   ([`BodyFault::Malformed`]). So the parser never holds much more than the backlog;
//! - over [`BodyLimits::max_bytes`] in all, the body is refused ([`BodyFault::TooLarge`]);
//! - a client that sends nothing for [`BodyLimits::idle`], or less than
//!   [`BodyLimits::min_rate`] on average once [`BodyLimits::grace`] is over, is refused
//!   ([`BodyFault::TooSlow`]), so a trickle cannot keep a place for minutes.
//!
//! [`crate::middleware::drain`] is the other half: the body of a request that is refused
//! before it is read is read and thrown away, raw and bounded, never parsed.
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::multipart::{Field, MultipartError};
use axum::extract::{FromRequest, Multipart, Request};
use futures::Stream;
use http_body::{Frame, SizeHint};
use tokio::time::{Instant, Sleep};

/// The bounds of one multipart body.
#[derive(Clone, Copy, Debug)]
pub struct BodyLimits {
    /// Most raw bytes in all (the largest allowed file plus [`FORM_ALLOWANCE`]).
    pub max_bytes: u64,
    /// Most raw bytes the parser may hold without handing any back.
    pub backlog: u64,
    /// Longest wait for the next bytes.
    pub idle: Duration,
    /// Bytes a second the body must average once `grace` is over.
    pub min_rate: u64,
    pub grace: Duration,
}

/// What the other fields, the part headers and the boundaries of an upload form may add to
/// its file: a few short text fields and a URL of at most 2 KB need far less.
pub const FORM_ALLOWANCE: u64 = 64 * 1024;

impl BodyLimits {
    /// The limits of an upload form whose file may have `max_file_bytes`.
    pub fn upload(max_file_bytes: u64) -> Self {
        Self {
            max_bytes: max_file_bytes.saturating_add(FORM_ALLOWANCE),
            backlog: 256 * 1024,
            idle: Duration::from_secs(20),
            min_rate: 16 * 1024,
            grace: Duration::from_secs(15),
        }
    }
}

/// Why a body was refused while it was read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BodyFault {
    #[error("the request body is larger than allowed")]
    TooLarge,
    #[error("the form's boundary or a part's headers did not come")]
    Malformed,
    #[error("the request body came too slowly")]
    TooSlow,
}

impl BodyFault {
    fn code(self) -> u8 {
        match self {
            Self::TooLarge => 1,
            Self::Malformed => 2,
            Self::TooSlow => 3,
        }
    }
    fn from_code(c: u8) -> Option<Self> {
        match c {
            1 => Some(Self::TooLarge),
            2 => Some(Self::Malformed),
            3 => Some(Self::TooSlow),
            _ => None,
        }
    }
}

/// What the body and its reader share.
#[derive(Default)]
struct Meter {
    /// Raw bytes handed to the parser.
    fed: AtomicU64,
    /// `fed` when the parser last handed something back.
    mark: AtomicU64,
    /// The first fault, if any ([`BodyFault::code`]; 0: none).
    fault: AtomicU8,
}

impl Meter {
    fn progress(&self) {
        self.mark.store(self.fed.load(Ordering::Acquire), Ordering::Release);
    }
    fn fault(&self) -> Option<BodyFault> {
        BodyFault::from_code(self.fault.load(Ordering::Acquire))
    }
    fn fail(&self, f: BodyFault) -> BodyFault {
        let _ = self.fault.compare_exchange(0, f.code(), Ordering::AcqRel, Ordering::Acquire);
        self.fault().unwrap_or(f)
    }
}

/// A request body that counts and bounds what it hands on (see the module docs).
pub struct MeteredBody {
    inner: Body,
    meter: Arc<Meter>,
    limits: BodyLimits,
    started: Instant,
    idle: Pin<Box<Sleep>>,
    /// The mark when the body last refused to hand on more: polled again with the same
    /// mark means the parser is waiting for bytes it has been refused.
    held_at: Option<u64>,
}

impl http_body::Body for MeteredBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let this = &mut *self;
        if let Some(f) = this.meter.fault() {
            return Poll::Ready(Some(Err(axum::Error::new(f))));
        }
        let fed = this.meter.fed.load(Ordering::Acquire);
        let mark = this.meter.mark.load(Ordering::Acquire);
        if fed - mark.min(fed) >= this.limits.backlog {
            if this.held_at == Some(mark) {
                return Poll::Ready(Some(Err(axum::Error::new(this.meter.fail(BodyFault::Malformed)))));
            }
            this.held_at = Some(mark);
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        this.held_at = None;
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => {
                let n = frame.data_ref().map_or(0, |d| d.len() as u64);
                let fed = this.meter.fed.fetch_add(n, Ordering::AcqRel) + n;
                if fed > this.limits.max_bytes {
                    return Poll::Ready(Some(Err(axum::Error::new(this.meter.fail(BodyFault::TooLarge)))));
                }
                let elapsed = this.started.elapsed();
                if elapsed > this.limits.grace && (fed as f64) < this.limits.min_rate as f64 * elapsed.as_secs_f64() {
                    return Poll::Ready(Some(Err(axum::Error::new(this.meter.fail(BodyFault::TooSlow)))));
                }
                let next = Instant::now() + this.limits.idle;
                this.idle.as_mut().reset(next);
                Poll::Ready(Some(Ok(frame)))
            }
            Poll::Pending => {
                if this.idle.as_mut().poll(cx).is_ready() {
                    return Poll::Ready(Some(Err(axum::Error::new(this.meter.fail(BodyFault::TooSlow)))));
                }
                Poll::Pending
            }
            other => other,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// Why a form could not be read: a fault of the raw body, or the parser's own complaint.
#[derive(Debug)]
pub enum FormError {
    Body(BodyFault),
    /// No multipart content type with a boundary.
    NotMultipart,
    Parse(MultipartError),
}

/// A multipart form over a [`MeteredBody`].
pub struct MeteredForm {
    form: Multipart,
    meter: Arc<Meter>,
}

impl MeteredForm {
    /// Starts reading `req` as a multipart form under `limits`. A declared length over the
    /// limit is refused before a byte is read.
    pub async fn new(req: Request, limits: BodyLimits) -> Result<Self, FormError> {
        let declared = req
            .headers()
            .get(axum::http::header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        if declared.is_some_and(|n| n > limits.max_bytes) {
            return Err(FormError::Body(BodyFault::TooLarge));
        }
        let meter = Arc::new(Meter::default());
        let m = meter.clone();
        let req = req.map(move |inner| {
            Body::new(MeteredBody {
                inner,
                meter: m,
                limits,
                started: Instant::now(),
                idle: Box::pin(tokio::time::sleep(limits.idle)),
                held_at: None,
            })
        });
        let form = Multipart::from_request(req, &()).await.map_err(|_| FormError::NotMultipart)?;
        Ok(Self { form, meter })
    }

    /// The next field, or `None` at the end of the form.
    pub async fn next_field(&mut self) -> Result<Option<MeteredField<'_>>, FormError> {
        let meter = self.meter.clone();
        match self.form.next_field().await {
            Ok(Some(field)) => {
                meter.progress();
                Ok(Some(MeteredField { field, meter }))
            }
            Ok(None) => Ok(None),
            Err(e) => Err(meter.fault().map_or(FormError::Parse(e), FormError::Body)),
        }
    }
}

/// One field of a [`MeteredForm`]; also a stream of its chunks.
pub struct MeteredField<'a> {
    field: Field<'a>,
    meter: Arc<Meter>,
}

impl MeteredField<'_> {
    pub fn name(&self) -> Option<&str> {
        self.field.name()
    }
    pub fn file_name(&self) -> Option<&str> {
        self.field.file_name()
    }
    /// The next chunk of the field's bytes.
    pub async fn chunk(&mut self) -> Result<Option<Bytes>, FormError> {
        use futures::StreamExt;
        self.next().await.transpose()
    }
}

impl Stream for MeteredField<'_> {
    type Item = Result<Bytes, FormError>;
    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        match Pin::new(&mut this.field).poll_next(cx) {
            Poll::Ready(Some(Ok(chunk))) => {
                this.meter.progress();
                Poll::Ready(Some(Ok(chunk)))
            }
            Poll::Ready(Some(Err(e))) => {
                Poll::Ready(Some(Err(this.meter.fault().map_or(FormError::Parse(e), FormError::Body))))
            }
            Poll::Ready(None) => Poll::Ready(None),
            Poll::Pending => Poll::Pending,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::header;

    fn limits() -> BodyLimits {
        BodyLimits {
            max_bytes: 1 << 20,
            backlog: 16 * 1024,
            idle: Duration::from_secs(5),
            min_rate: 0,
            grace: Duration::from_secs(60),
        }
    }

    fn request(body: Body, boundary: &str) -> Request {
        Request::builder()
            .method("POST")
            .uri("/")
            .header(header::CONTENT_TYPE, format!("multipart/form-data; boundary={boundary}"))
            .body(body)
            .unwrap()
    }

    /// An endless stream of `chunk`, counting how many were taken.
    fn endless(chunk: &'static [u8], taken: Arc<AtomicU64>) -> Body {
        Body::from_stream(futures::stream::repeat_with(move || {
            taken.fetch_add(1, Ordering::Relaxed);
            Ok::<_, std::io::Error>(Bytes::from_static(chunk))
        }))
    }

    async fn read_all(form: &mut MeteredForm) -> Result<Vec<(String, usize)>, FormError> {
        let mut out = Vec::new();
        while let Some(mut f) = form.next_field().await? {
            let name = f.name().unwrap_or("").to_owned();
            let mut n = 0;
            while let Some(c) = f.chunk().await? {
                n += c.len();
            }
            out.push((name, n));
        }
        Ok(out)
    }

    #[tokio::test]
    async fn a_form_is_read_whole_within_its_limits() {
        let file = vec![7u8; 300_000];
        let mut body = b"--XyZ\r\nContent-Disposition: form-data; name=\"mode\"\r\n\r\nauto\r\n--XyZ\r\n".to_vec();
        body.extend_from_slice(b"Content-Disposition: form-data; name=\"file\"; filename=\"a.jpg\"\r\n\r\n");
        body.extend_from_slice(&file);
        body.extend_from_slice(b"\r\n--XyZ--\r\n");
        // Sent in one piece: the parser holds far more than the backlog at once, and hands it back.
        let mut form = MeteredForm::new(request(Body::from(body), "XyZ"), limits()).await.unwrap();
        assert_eq!(read_all(&mut form).await.unwrap(), vec![("mode".into(), 4), ("file".into(), 300_000)]);
    }

    #[tokio::test]
    async fn a_boundary_that_never_comes_is_refused_after_the_backlog() {
        let taken = Arc::new(AtomicU64::new(0));
        let body = endless(&[b'a'; 1024], taken.clone());
        let mut form = MeteredForm::new(request(body, "XyZ"), limits()).await.unwrap();
        assert!(matches!(form.next_field().await, Err(FormError::Body(BodyFault::Malformed))));
        // 16 KB of backlog: the parser was handed 16 or 17 chunks of 1 KB, not the megabyte allowed.
        assert!(taken.load(Ordering::Relaxed) <= 18, "{}", taken.load(Ordering::Relaxed));
    }

    #[tokio::test]
    async fn part_headers_that_never_end_are_refused_after_the_backlog() {
        let taken = Arc::new(AtomicU64::new(0));
        let head = futures::stream::once(async {
            Ok::<_, std::io::Error>(Bytes::from_static(
                b"--XyZ\r\nContent-Disposition: form-data; name=\"file\"\r\nX-Pad: ",
            ))
        });
        let t = taken.clone();
        let rest = futures::stream::repeat_with(move || {
            t.fetch_add(1, Ordering::Relaxed);
            Ok::<_, std::io::Error>(Bytes::from_static(&[b'b'; 1024]))
        });
        use futures::StreamExt;
        let mut form = MeteredForm::new(request(Body::from_stream(head.chain(rest)), "XyZ"), limits()).await.unwrap();
        assert!(matches!(form.next_field().await, Err(FormError::Body(BodyFault::Malformed))));
        assert!(taken.load(Ordering::Relaxed) <= 18, "{}", taken.load(Ordering::Relaxed));
    }

    #[tokio::test]
    async fn the_raw_body_is_capped_whatever_the_fields_say() {
        let mut l = limits();
        l.backlog = 4 << 20;
        let taken = Arc::new(AtomicU64::new(0));
        let body = endless(&[b'a'; 4096], taken.clone());
        let mut form = MeteredForm::new(request(body, "XyZ"), l).await.unwrap();
        assert!(matches!(form.next_field().await, Err(FormError::Body(BodyFault::TooLarge))));
        assert_eq!(taken.load(Ordering::Relaxed), 257);
        // A declared length over the cap is refused unread.
        let mut req = request(Body::empty(), "XyZ");
        req.headers_mut().insert(header::CONTENT_LENGTH, (2u64 << 20).into());
        assert!(matches!(MeteredForm::new(req, limits()).await, Err(FormError::Body(BodyFault::TooLarge))));
    }

    #[tokio::test(start_paused = true)]
    async fn a_body_that_stops_coming_is_refused_as_too_slow() {
        let head = futures::stream::once(async {
            Ok::<_, std::io::Error>(Bytes::from_static(
                b"--XyZ\r\nContent-Disposition: form-data; name=\"file\"\r\n\r\nab",
            ))
        });
        use futures::StreamExt;
        let body = Body::from_stream(head.chain(futures::stream::pending()));
        let mut form = MeteredForm::new(request(body, "XyZ"), limits()).await.unwrap();
        let mut field = form.next_field().await.unwrap().unwrap();
        assert_eq!(field.chunk().await.unwrap().unwrap(), "ab");
        assert!(matches!(field.chunk().await, Err(FormError::Body(BodyFault::TooSlow))));
    }

    #[tokio::test(start_paused = true)]
    async fn a_trickle_under_the_minimum_rate_is_refused_after_the_grace() {
        let mut l = limits();
        l.min_rate = 1024;
        l.grace = Duration::from_secs(10);
        let head = futures::stream::once(async {
            Ok::<_, std::io::Error>(Bytes::from_static(
                b"--XyZ\r\nContent-Disposition: form-data; name=\"file\"\r\n\r\n",
            ))
        });
        // One byte every 2 s: never idle for long, far under 1 KB/s.
        let trickle = futures::stream::unfold((), |()| async {
            tokio::time::sleep(Duration::from_secs(2)).await;
            Some((Ok::<_, std::io::Error>(Bytes::from_static(b"x")), ()))
        });
        use futures::StreamExt;
        let started = Instant::now();
        let mut form = MeteredForm::new(request(Body::from_stream(head.chain(trickle)), "XyZ"), l).await.unwrap();
        let mut field = form.next_field().await.unwrap().unwrap();
        let fault = loop {
            match field.chunk().await {
                Ok(Some(_)) => continue,
                Ok(None) => panic!("the trickle ended"),
                Err(e) => break e,
            }
        };
        assert!(matches!(fault, FormError::Body(BodyFault::TooSlow)));
        assert!(started.elapsed() <= Duration::from_secs(13), "{:?}", started.elapsed());
    }

    #[tokio::test]
    async fn draining_keeps_nothing_and_stops_at_its_budget() {
        let taken = Arc::new(AtomicU64::new(0));
        crate::middleware::drain::body(endless(&[0; 65536], taken.clone())).await;
        assert_eq!(taken.load(Ordering::Relaxed), crate::middleware::drain::DRAIN_BYTES / 65536 + 1);
    }
}
