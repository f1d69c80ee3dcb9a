//! Public answers kept ready: what a visitor gets from the pages and JSON that change only
//! when someone edits them (the settings answer, the home page, about, the blog list and
//! articles, the feed, the sitemap), built once and answered from memory.
//!
//! * **What is kept.** The answer to a `GET` of one of [`kept`]'s addresses, made for a
//!   visitor without a session cookie or an API key, when it is a `200` that a shared cache
//!   could store (no `Set-Cookie`, no `private` or `no-store`, nothing it varies on but
//!   cookies, the encoding and CORS). Its headers are kept as the layers inside this one set
//!   them (cache rule, `Vary`, security headers). Pages go only to visitors without a session
//!   ([`Keep::Visitors`]); the JSON, XML and text that never depend on who asks (the
//!   settings, the engines, the blog list, the feed, the sitemap, robots.txt) go to everyone
//!   without an API key, signed in or not ([`Keep::Everyone`]): every page's islands ask for
//!   the settings, and that answer is serialized once per content version, not per request.
//! * **What a kept answer costs.** The layer sits outermost but for compression (see
//!   `app::build_router`), so a kept answer skips the request id, the trace span, the panic
//!   guard, the session, CORS, CSP, the cache rule and the error pages, which all ran when it
//!   was made. When the version reading is recent (the common case) it is answered inside the
//!   service's `call`: no database, no await, no boxed future; a hash-map look-up, a copy of
//!   the kept headers, a fresh nonce and the kept body parts, shared, not copied. Only a stale
//!   reading or a miss takes the slow path (read the version, build, keep).
//! * **Compression, once.** A kept body of 32 bytes or more is also kept gzipped, cut at the
//!   nonce like the plain one: each part a raw deflate stream of its own, flushed to a byte
//!   boundary. An answer to a client that takes gzip (every browser and crawler) puts its nonce
//!   between the parts as a stored block and the CRC-32 and length of its own bytes at the end
//!   (the parts' CRCs are kept and combined with the nonce's), so a gzipped page costs what a
//!   plain one costs instead of a compression per request. Other encodings (a client that
//!   takes only `br`) are left to the compression layer outside.
//! * **What stays per answer.** The CSP nonce. The page is kept cut at its nonce (a fresh
//!   random value for every answer, given to the page by this layer), and every answer puts
//!   a new one in the body and the policy. Pages for someone signed in are never kept.
//! * **Invalidation, on every node.** Each answer is tagged with the content version
//!   (`services::content_version`) read before it was built and with whether the Library can
//!   answer, and is used only while both are unchanged. A node answers from a version reading
//!   no older than two intervals (`REELFIND_CONTENT_CHECK_MS`, 500 ms by default), so an edit
//!   committed on one node is seen on every node within two intervals (1 s by default), with
//!   no sticky sessions. After an unsafe request by someone signed in (an edit), this node
//!   reads the version again before it answers the next request, so the editor sees the edit
//!   at once.
//! * **Validators.** Each kept answer has an `ETag` (weak for pages, which differ in their
//!   nonce; strong for JSON and XML, whose gzipped copy has a strong tag of its own, `-gz`)
//!   made from its content, the same on every node, and a request whose `If-None-Match`
//!   matches gets `304 Not Modified` with the `ETag`, `Cache-Control` and `Vary` of the answer
//!   and no policy: a browser that keeps its copy keeps the policy that carries that copy's
//!   nonce.
//!
//! At most [`MAX_KEPT`] answers are kept per node (the blog's pages and filters are many
//! addresses); past that, the oldest go first. Measured speed: `src/routes/README.md`.
use std::collections::{HashMap, VecDeque};
use std::convert::Infallible;
use std::future::{Ready, ready};
use std::io::Write as _;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::task::{Context, Poll};
use std::time::Instant;

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum_extra::headers::{ETag, HeaderMapExt, IfNoneMatch};
use futures::future::{BoxFuture, Either};
use sha2::{Digest, Sha256};
use tower::{Layer, Service, ServiceExt};

use crate::middleware::csp::{CspNonce, NONCE_LEN};
use crate::services::content_version::Version;
use crate::state::AppState;

/// Answers kept per node at most.
pub const MAX_KEPT: usize = 512;
/// A body larger than this is not kept.
const MAX_BODY: usize = 4 << 20;
/// A kept body at least this long is also kept gzipped (as the compression layer would
/// compress it: it compresses what is longer than 32 bytes).
const GZIP_FROM: usize = 32;

/// Who may be given the kept answer of an address.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Keep {
    /// Answered afresh every time (personal, searched, or not content at all).
    No,
    /// Pages: the same for every visitor without a session; someone signed in gets a page
    /// rendered for them (their name is in its header), never a kept one.
    Visitors,
    /// JSON, XML and text that never depend on who asks: kept answers go to everyone
    /// without an API key, signed in or not (the islands of every page ask for the settings).
    Everyone,
}

/// Whether the answer at this address may be kept: the addresses whose content depends only
/// on the site's content, with the query parameters that select it (others, like a blog
/// search or a shared result's `?id=`, are answered afresh).
pub fn kept(path: &str, query: Option<&str>) -> Keep {
    let q = query.unwrap_or("");
    let only = |keys: &[&str]| url::form_urlencoded::parse(q.as_bytes()).all(|(k, _)| keys.contains(&k.as_ref()));
    let when = |ok: bool, keep: Keep| if ok { keep } else { Keep::No };
    match path {
        "/api/settings" | "/api/models" | "/sitemap.xml" | "/robots.txt" | "/blog/feed.xml" => {
            when(q.is_empty(), Keep::Everyone)
        }
        "/api/blog" => when(only(&["offset", "limit", "category", "tag"]), Keep::Everyone),
        "/" => when(q.is_empty(), Keep::Visitors),
        "/about" => when(only(&["category"]), Keep::Visitors),
        "/blog" => when(only(&["page", "category", "tag"]), Keep::Visitors),
        _ => when(
            q.is_empty() && path.strip_prefix("/blog/").is_some_and(|slug| !slug.is_empty() && !slug.contains('/')),
            Keep::Visitors,
        ),
    }
}

/// The answers of one node.
pub struct PublicAnswers {
    entries: RwLock<HashMap<String, Arc<Answer>>>,
    /// Insertion order, for dropping the oldest when full.
    order: Mutex<VecDeque<String>>,
    /// Whether the Library could answer at the last look, and when that was (ms since `born`).
    library: AtomicBool,
    library_at: AtomicU64,
    born: Instant,
}

impl Default for PublicAnswers {
    fn default() -> Self {
        Self {
            entries: RwLock::default(),
            order: Mutex::default(),
            library: AtomicBool::new(false),
            library_at: AtomicU64::new(u64::MAX),
            born: Instant::now(),
        }
    }
}

/// One kept answer.
struct Answer {
    version: Version,
    library: bool,
    /// As answered, without `Content-Length`, the policy and the `ETag`.
    headers: HeaderMap,
    /// The policy, cut at the nonce.
    policy: Option<Vec<Bytes>>,
    /// The body, cut at the nonce.
    body: Vec<Bytes>,
    etag: ETag,
    etag_value: HeaderValue,
    /// The same body gzipped, for the clients that accept it.
    gzip: Option<Gzipped>,
}

/// A kept body gzipped once, cut at the nonce like the body: each part is a raw deflate
/// stream of its own (flushed to a byte boundary, the last one finished), and an answer
/// puts its nonce between them as a stored block and the checksum of its own bytes at the
/// end. So a gzipped page costs per answer what the plain one costs, not a compression.
struct Gzipped {
    /// The gzip header and the first part, then the other parts.
    parts: Vec<Bytes>,
    /// The CRC-32 of each plain part, combined per answer with the nonce's.
    crcs: Vec<crc32fast::Hasher>,
    /// The plain length without the nonces.
    len: u64,
    etag: ETag,
    etag_value: HeaderValue,
}

impl PublicAnswers {
    /// Whether the Library can answer (home page, `/api/models`), looked at no more than once
    /// per version interval (the catalog is a file another process may change).
    fn library(&self, state: &AppState) -> bool {
        let now = self.born.elapsed().as_millis() as u64;
        let at = self.library_at.load(Ordering::Acquire);
        let every = state.content.interval().as_millis() as u64;
        if at == u64::MAX || now.saturating_sub(at) >= every {
            self.library.store(state.library.serves(), Ordering::Release);
            self.library_at.store(now, Ordering::Release);
        }
        self.library.load(Ordering::Acquire)
    }

    fn get(&self, key: &str, version: Version, library: bool) -> Option<Arc<Answer>> {
        let entries = self.entries.read().unwrap_or_else(PoisonError::into_inner);
        entries.get(key).filter(|k| k.version == version && k.library == library).cloned()
    }

    fn put(&self, key: &str, kept: Arc<Answer>, current: Version) {
        let mut entries = self.entries.write().unwrap_or_else(PoisonError::into_inner);
        let mut order = self.order.lock().unwrap_or_else(PoisonError::into_inner);
        if entries.len() >= MAX_KEPT && !entries.contains_key(key) {
            entries.retain(|_, k| k.version == current);
            order.retain(|k| entries.contains_key(k));
            while entries.len() >= MAX_KEPT {
                let Some(oldest) = order.pop_front() else { break };
                entries.remove(&oldest);
            }
        }
        if entries.insert(key.to_owned(), kept).is_none() {
            order.push_back(key.to_owned());
        }
    }

    /// How many answers this node keeps (for tests and diagnostics).
    pub fn len(&self) -> usize {
        self.entries.read().unwrap_or_else(PoisonError::into_inner).len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The layer (see the module docs). `app::build_router` puts it inside compression and
/// outside everything else: a kept answer skips the request id, the trace span, the panic
/// guard, the session, CORS, CSP, the cache rule and the error pages, all of which ran when
/// it was made.
#[derive(Clone)]
pub struct PublicAnswersLayer {
    state: AppState,
    answers: Arc<PublicAnswers>,
}

impl PublicAnswersLayer {
    pub fn new(state: AppState) -> Self {
        Self { state, answers: Arc::new(PublicAnswers::default()) }
    }

    /// What this node keeps.
    pub fn answers(&self) -> &Arc<PublicAnswers> {
        &self.answers
    }
}

impl<S> Layer<S> for PublicAnswersLayer {
    type Service = PublicAnswersService<S>;

    fn layer(&self, inner: S) -> Self::Service {
        PublicAnswersService { layer: self.clone(), inner }
    }
}

/// The service of [`PublicAnswersLayer`].
#[derive(Clone)]
pub struct PublicAnswersService<S> {
    layer: PublicAnswersLayer,
    inner: S,
}

type Answered = Result<Response, Infallible>;

impl<S> PublicAnswersService<S>
where
    S: Clone,
{
    /// The inner service that was polled ready, leaving a clone in its place.
    fn take_inner(&mut self) -> S {
        let clone = self.inner.clone();
        std::mem::replace(&mut self.inner, clone)
    }
}

impl<S> Service<Request> for PublicAnswersService<S>
where
    S: Service<Request, Response = Response, Error = Infallible> + Clone + Send + Sync + 'static,
    S::Future: Send + 'static,
{
    type Response = Response;
    type Error = Infallible;
    type Future = Either<Ready<Answered>, Either<S::Future, BoxFuture<'static, Answered>>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request) -> Self::Future {
        let method = req.method();
        if method != Method::GET && method != Method::HEAD {
            // An edit by someone signed in: read the version again before answering the
            // next request, so that this node's next answer shows it.
            if method != Method::OPTIONS && crate::middleware::auth::session_token(req.headers()).is_some() {
                let (inner, state) = (self.take_inner(), self.layer.state.clone());
                return Either::Right(Either::Right(Box::pin(async move {
                    let res = inner.oneshot(req).await?;
                    if (res.status().is_success() || res.status().is_redirection())
                        && let Err(error) = state.content.refresh(&state.db).await
                    {
                        tracing::warn!(%error, "the content version could not be read after a write");
                    }
                    Ok(res)
                })));
            }
            return Either::Right(Either::Left(self.inner.call(req)));
        }
        let headers = req.headers();
        let uri = req.uri();
        let keep = if headers.contains_key(header::AUTHORIZATION) { Keep::No } else { kept(uri.path(), uri.query()) };
        let visitor = || crate::middleware::auth::session_token(headers).is_none();
        let answer_kept = match keep {
            Keep::No => false,
            Keep::Everyone => true,
            Keep::Visitors => visitor(),
        };
        if !answer_kept {
            return Either::Right(Either::Left(self.inner.call(req)));
        }
        let key = uri.path_and_query().map_or(uri.path(), |pq| pq.as_str());
        let (state, answers) = (&self.layer.state, &self.layer.answers);
        // The common case: a recent version reading and the answer kept. Nothing is
        // awaited, boxed or queried.
        if let Some(version) = state.content.fresh(&state.db)
            && let Some(answer) = answers.get(key, version, answers.library(state))
        {
            let if_none_match = headers.typed_get::<IfNoneMatch>();
            let res = answer.answer(
                accepts_gzip(headers),
                if_none_match.as_ref(),
                &crate::middleware::csp::new_nonce_bytes(),
            );
            return Either::Left(ready(Ok(res)));
        }
        let fill = method == Method::GET && visitor();
        let (inner, layer) = (self.take_inner(), self.layer.clone());
        Either::Right(Either::Right(Box::pin(answer_or_keep(layer, inner, req, fill))))
    }
}

/// The slow path: the version read (or waited for), the answer looked up again, else made
/// by the layers inside and, when `fill` (a `GET` without a session), kept.
async fn answer_or_keep<S>(layer: PublicAnswersLayer, inner: S, mut req: Request, fill: bool) -> Answered
where
    S: Service<Request, Response = Response, Error = Infallible>,
{
    let PublicAnswersLayer { state, answers } = layer;
    let version = match state.content.current(&state.db).await {
        Ok(v) => v,
        Err(error) => {
            tracing::warn!(%error, "the content version could not be read; answering afresh");
            return inner.oneshot(req).await;
        }
    };
    let uri = req.uri();
    let key = uri.path_and_query().map_or(uri.path(), |pq| pq.as_str()).to_owned();
    let library = answers.library(&state);
    let gzip = accepts_gzip(req.headers());
    let if_none_match = req.headers().typed_get::<IfNoneMatch>();
    if let Some(answer) = answers.get(&key, version, library) {
        return Ok(answer.answer(gzip, if_none_match.as_ref(), &crate::middleware::csp::new_nonce_bytes()));
    }
    if !fill {
        return inner.oneshot(req).await;
    }
    let nonce = crate::middleware::csp::new_nonce_bytes();
    let nonce_text = std::str::from_utf8(&nonce).expect("base64 is ASCII").to_owned();
    req.extensions_mut().insert(CspNonce(nonce_text));
    let res = inner.oneshot(req).await?;
    if !storable(&res) {
        return Ok(res);
    }
    let (parts, body) = res.into_parts();
    let bytes = match axum::body::to_bytes(body, MAX_BODY).await {
        Ok(b) => b,
        Err(error) => {
            tracing::warn!(%error, path = %key, "a public answer could not be read");
            return Ok(
                crate::error::AppError::Internal(anyhow::anyhow!("public answer unreadable: {error}")).into_response()
            );
        }
    };
    let answer = Arc::new(Answer::new(version, library, parts.headers, bytes, &nonce));
    let res = answer.answer(gzip, if_none_match.as_ref(), &nonce);
    answers.put(&key, answer, version);
    Ok(res)
}

/// Whether the client takes gzip (`Accept-Encoding`: `gzip` or `*` with a non-zero `q`).
fn accepts_gzip(headers: &HeaderMap) -> bool {
    let (mut gzip, mut any) = (None, None);
    for value in headers.get_all(header::ACCEPT_ENCODING) {
        let Ok(value) = value.to_str() else { continue };
        for item in value.split(',') {
            let mut fields = item.split(';');
            let coding = fields.next().unwrap_or("").trim();
            let q = fields
                .find_map(|f| {
                    let (k, v) = f.split_once('=')?;
                    k.trim().eq_ignore_ascii_case("q").then(|| v.trim().parse::<f32>().unwrap_or(0.0))
                })
                .unwrap_or(1.0);
            if coding.eq_ignore_ascii_case("gzip") || coding.eq_ignore_ascii_case("x-gzip") {
                gzip = Some(q > 0.0);
            } else if coding == "*" {
                any = Some(q > 0.0);
            }
        }
    }
    gzip.or(any).unwrap_or(false)
}

/// A `200` a shared cache could keep, that varies only on what this layer accounts for.
fn storable(res: &Response) -> bool {
    let h = res.headers();
    let cache_ok = h.get_all(header::CACHE_CONTROL).iter().all(|v| {
        v.to_str().is_ok_and(|v| {
            let v = v.to_ascii_lowercase();
            !v.contains("no-store") && !v.contains("private")
        })
    });
    let vary_ok = h.get_all(header::VARY).iter().all(|v| {
        v.to_str().is_ok_and(|v| {
            v.split(',').map(|t| t.trim().to_ascii_lowercase()).all(|t| {
                matches!(
                    t.as_str(),
                    "cookie"
                        | "accept-encoding"
                        | "origin"
                        | "access-control-request-method"
                        | "access-control-request-headers"
                )
            })
        })
    });
    res.status() == StatusCode::OK
        && !h.contains_key(header::SET_COOKIE)
        && !h.contains_key(header::CONTENT_ENCODING)
        && cache_ok
        && vary_ok
        && res.extensions().get::<crate::error::ErrorMarker>().is_none()
}

/// Splits `bytes` at every occurrence of `nonce`.
fn cut(bytes: &Bytes, nonce: &[u8]) -> Vec<Bytes> {
    let mut parts = Vec::new();
    let mut rest = bytes.clone();
    while let Some(at) = find(&rest, nonce) {
        parts.push(rest.slice(..at));
        rest = rest.slice(at + nonce.len()..);
    }
    parts.push(rest);
    parts
}

impl Answer {
    fn new(version: Version, library: bool, mut headers: HeaderMap, body: Bytes, nonce: &[u8; NONCE_LEN]) -> Self {
        headers.remove(header::CONTENT_LENGTH);
        headers.remove(header::ETAG);
        let policy =
            headers.remove(header::CONTENT_SECURITY_POLICY).map(|v| cut(&Bytes::copy_from_slice(v.as_bytes()), nonce));
        let parts = cut(&body, nonce);
        let mut hash = Sha256::new();
        for p in &parts {
            hash.update((p.len() as u64).to_le_bytes());
            hash.update(p);
        }
        if let Some(ct) = headers.get(header::CONTENT_TYPE) {
            hash.update(ct.as_bytes());
        }
        let digest = hash.finalize();
        let tag = hex::encode(&digest[..16]);
        // Answers that differ in their nonce are the same content, not the same bytes.
        let weak = parts.len() > 1;
        let (etag, etag_value) = entity_tag(&tag, weak);
        let gzip = (body.len() >= GZIP_FROM).then(|| {
            let has_vary = headers.get_all(header::VARY).iter().any(|v| {
                v.to_str().is_ok_and(|v| v.split(',').any(|t| t.trim().eq_ignore_ascii_case("accept-encoding")))
            });
            if !has_vary {
                headers.append(header::VARY, HeaderValue::from_static("accept-encoding"));
            }
            // The gzipped bytes are another representation: a strong tag of their own.
            let (etag, etag_value) =
                if weak { (etag.clone(), etag_value.clone()) } else { entity_tag(&format!("{tag}-gz"), false) };
            Gzipped::new(&parts, etag, etag_value)
        });
        Self { version, library, headers, policy, body: parts, etag, etag_value, gzip }
    }

    /// The kept answer with `nonce` (gzipped when `gzip`), or `304` when the client holds it
    /// already.
    fn answer(&self, gzip: bool, if_none_match: Option<&IfNoneMatch>, nonce: &[u8; NONCE_LEN]) -> Response {
        let gzipped = self.gzip.as_ref().filter(|_| gzip);
        let (etag, etag_value) = match gzipped {
            Some(g) => (&g.etag, &g.etag_value),
            None => (&self.etag, &self.etag_value),
        };
        if if_none_match.is_some_and(|inm| !inm.precondition_passes(etag)) {
            let mut res = StatusCode::NOT_MODIFIED.into_response();
            let h = res.headers_mut();
            h.insert(header::ETAG, etag_value.clone());
            for name in [header::CACHE_CONTROL, header::VARY] {
                for v in self.headers.get_all(&name) {
                    h.append(name.clone(), v.clone());
                }
            }
            return res;
        }
        let mut headers = self.headers.clone();
        headers.insert(header::ETAG, etag_value.clone());
        if let Some(policy) = &self.policy {
            let mut v = Vec::with_capacity(policy.iter().map(Bytes::len).sum::<usize>() + NONCE_LEN * policy.len());
            for (i, part) in policy.iter().enumerate() {
                if i > 0 {
                    v.extend_from_slice(nonce);
                }
                v.extend_from_slice(part);
            }
            if let Ok(v) = HeaderValue::from_maybe_shared(Bytes::from(v)) {
                headers.insert(header::CONTENT_SECURITY_POLICY, v);
            }
        }
        let body = match gzipped {
            Some(g) => {
                headers.insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
                g.chunks(nonce)
            }
            None => {
                let nonce = Bytes::copy_from_slice(nonce);
                Chunks::new(&self.body, &nonce, None)
            }
        };
        let mut res = Response::new(Body::new(body));
        *res.headers_mut() = headers;
        res
    }
}

fn entity_tag(tag: &str, weak: bool) -> (ETag, HeaderValue) {
    let text = if weak { format!("W/\"{tag}\"") } else { format!("\"{tag}\"") };
    let etag = text.parse::<ETag>().expect("a hex tag is a valid entity tag");
    let value = HeaderValue::from_str(&text).expect("a hex tag is a valid header value");
    (etag, value)
}

impl Gzipped {
    fn new(parts: &[Bytes], etag: ETag, etag_value: HeaderValue) -> Self {
        let mut out = Vec::with_capacity(parts.len());
        let mut crcs = Vec::with_capacity(parts.len());
        for (i, part) in parts.iter().enumerate() {
            let mut deflated = Vec::new();
            if i == 0 {
                // ID1 ID2, deflate, no flags, no time, no extra flags, unknown system.
                deflated.extend_from_slice(&[0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff]);
            }
            let mut encoder = flate2::write::DeflateEncoder::new(deflated, flate2::Compression::best());
            encoder.write_all(part).expect("deflating into memory");
            let deflated = if i + 1 == parts.len() {
                encoder.finish().expect("deflating into memory")
            } else {
                // A sync flush ends the part on a byte boundary with the stream still open.
                encoder.flush().expect("deflating into memory");
                std::mem::take(encoder.get_mut())
            };
            out.push(Bytes::from(deflated));
            let mut crc = crc32fast::Hasher::new();
            crc.update(part);
            crcs.push(crc);
        }
        let len = parts.iter().map(|p| p.len() as u64).sum();
        Self { parts: out, crcs, len, etag, etag_value }
    }

    /// The gzipped body with `nonce` between the parts.
    fn chunks(&self, nonce: &[u8; NONCE_LEN]) -> Chunks {
        let mut crc = self.crcs[0].clone();
        for part in &self.crcs[1..] {
            let mut n = crc32fast::Hasher::new();
            n.update(nonce);
            crc.combine(&n);
            crc.combine(part);
        }
        let len = self.len + (NONCE_LEN * (self.parts.len() - 1)) as u64;
        // A stored block (not final, type 00) of the nonce's length, then the nonce.
        let n = NONCE_LEN as u16;
        let mut stored = Vec::with_capacity(5 + NONCE_LEN);
        stored.push(0);
        stored.extend_from_slice(&n.to_le_bytes());
        stored.extend_from_slice(&(!n).to_le_bytes());
        stored.extend_from_slice(nonce);
        let mut trailer = Vec::with_capacity(8);
        trailer.extend_from_slice(&crc.finalize().to_le_bytes());
        trailer.extend_from_slice(&(len as u32).to_le_bytes());
        Chunks::new(&self.parts, &Bytes::from(stored), Some(Bytes::from(trailer)))
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() {
        return None;
    }
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// A kept body with this answer's nonce between its parts, sent part by part (no copy).
struct Chunks {
    chunks: VecDeque<Bytes>,
    left: u64,
}

impl Chunks {
    fn new(parts: &[Bytes], between: &Bytes, end: Option<Bytes>) -> Self {
        let mut chunks = VecDeque::with_capacity(parts.len() * 2 + 1);
        for (i, part) in parts.iter().enumerate() {
            if i > 0 {
                chunks.push_back(between.clone());
            }
            if !part.is_empty() {
                chunks.push_back(part.clone());
            }
        }
        chunks.extend(end);
        let left = chunks.iter().map(|c| c.len() as u64).sum();
        Self { chunks, left }
    }
}

impl http_body::Body for Chunks {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, Infallible>>> {
        match self.chunks.pop_front() {
            Some(c) => {
                self.left -= c.len() as u64;
                Poll::Ready(Some(Ok(http_body::Frame::data(c))))
            }
            None => Poll::Ready(None),
        }
    }

    fn is_end_stream(&self) -> bool {
        self.chunks.is_empty()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        http_body::SizeHint::with_exact(self.left)
    }
}

#[cfg(test)]
mod tests {
    use std::io::Read as _;

    use http_body_util::BodyExt;

    use super::*;

    #[test]
    fn only_content_addresses_are_kept() {
        assert_eq!(kept("/", None), Keep::Visitors);
        assert_eq!(kept("/", Some("id=abc")), Keep::No, "a shared result is someone's");
        assert_eq!(kept("/api/settings", None), Keep::Everyone);
        assert_eq!(kept("/api/settings", Some("x=1")), Keep::No);
        assert_eq!(kept("/api/blog", Some("limit=3")), Keep::Everyone);
        assert_eq!(kept("/api/blog", Some("search=dune")), Keep::No);
        assert_eq!(kept("/blog", Some("page=2&category=Guides")), Keep::Visitors);
        assert_eq!(kept("/blog", Some("search=dune")), Keep::No, "searches are not kept");
        assert_eq!(kept("/blog/some-post", None), Keep::Visitors);
        assert_eq!(kept("/blog/some-post/edit", None), Keep::No);
        assert_eq!(kept("/about", Some("category=mobile")), Keep::Visitors);
        assert_eq!(kept("/history", None), Keep::No);
        assert_eq!(kept("/api/history", None), Keep::No);
        assert_eq!(kept("/admin/blog/1/preview", None), Keep::No);
    }

    #[test]
    fn gzip_is_taken_as_the_client_says() {
        let with = |v: &str| {
            let mut h = HeaderMap::new();
            h.insert(header::ACCEPT_ENCODING, HeaderValue::from_str(v).unwrap());
            accepts_gzip(&h)
        };
        assert!(!accepts_gzip(&HeaderMap::new()));
        assert!(with("gzip, deflate, br, zstd"));
        assert!(with("br;q=1.0, GZIP;q=0.5"));
        assert!(with("*"));
        assert!(!with("br"));
        assert!(!with("gzip;q=0, *"));
        assert!(!with("identity"));
    }

    async fn body_of(res: Response) -> Vec<u8> {
        res.into_body().collect().await.unwrap().to_bytes().to_vec()
    }

    fn gunzip(bytes: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(bytes).read_to_end(&mut out).expect("a valid gzip stream (checksum and length)");
        out
    }

    fn answer_of(body: &str, content_type: &'static str, nonce: &[u8; NONCE_LEN]) -> Answer {
        let mut headers = HeaderMap::new();
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
        let version = Version { generation: 1, newest_post: None };
        Answer::new(version, false, headers, Bytes::from(body.to_owned()), nonce)
    }

    #[tokio::test]
    async fn a_gzipped_page_carries_each_answers_nonce() {
        let made_with = crate::middleware::csp::new_nonce_bytes();
        let n = std::str::from_utf8(&made_with).unwrap();
        let page = format!(
            "{n}<html><script nonce=\"{n}\">a()</script>{}<script nonce=\"{n}\">b()</script></html>{n}",
            "<p>Reelfind keeps this paragraph ready.</p>".repeat(50)
        );
        let answer = answer_of(&page, "text/html; charset=utf-8", &made_with);
        assert_eq!(answer.body.len(), 5);
        for _ in 0..3 {
            let nonce = crate::middleware::csp::new_nonce_bytes();
            let expected = page.replace(n, std::str::from_utf8(&nonce).unwrap());
            let plain = answer.answer(false, None, &nonce);
            assert!(plain.headers().get(header::CONTENT_ENCODING).is_none());
            assert_eq!(body_of(plain).await, expected.as_bytes());
            let gz = answer.answer(true, None, &nonce);
            assert_eq!(gz.headers()[header::CONTENT_ENCODING], "gzip");
            assert_eq!(gz.headers()[header::VARY], "accept-encoding");
            assert_eq!(gz.headers()[header::ETAG], answer.etag_value, "a weak tag names both");
            let bytes = body_of(gz).await;
            assert!(bytes.len() < expected.len() / 4, "{} gzipped bytes for {}", bytes.len(), expected.len());
            assert_eq!(gunzip(&bytes), expected.as_bytes());
        }
    }

    #[tokio::test]
    async fn gzipped_json_has_a_strong_tag_of_its_own() {
        let nonce = crate::middleware::csp::new_nonce_bytes();
        let json = format!("{{\"site_name\":\"Reelfind\",\"about\":\"{}\"}}", "x".repeat(200));
        let answer = answer_of(&json, "application/json", &nonce);
        assert_eq!(answer.body.len(), 1);
        let gz = answer.answer(true, None, &nonce);
        let tag = gz.headers()[header::ETAG].to_str().unwrap().to_owned();
        assert!(tag.ends_with("-gz\"") && !tag.starts_with("W/"), "{tag}");
        assert_ne!(tag, answer.etag_value.to_str().unwrap());
        assert_eq!(gunzip(&body_of(gz).await), json.as_bytes());
        // Each representation is revalidated with its own tag.
        let held: IfNoneMatch = tag.parse::<ETag>().unwrap().into();
        assert_eq!(answer.answer(true, Some(&held), &nonce).status(), StatusCode::NOT_MODIFIED);
        assert_eq!(answer.answer(false, Some(&held), &nonce).status(), StatusCode::OK);
        // Too short to be worth it: kept plain only.
        let tiny = answer_of("{}", "application/json", &nonce);
        assert!(tiny.gzip.is_none());
        assert!(tiny.answer(true, None, &nonce).headers().get(header::CONTENT_ENCODING).is_none());
    }
}
