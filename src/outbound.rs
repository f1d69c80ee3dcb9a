//! The one HTTP client for URLs that a user chose (push endpoints, and images or clips to
//! identify by URL). A URL from a browser is hostile: it may point at this machine, the cloud
//! metadata service or the private network behind us, directly, through a hostname that
//! resolves there, or through a redirect. [`StrictClient`] therefore:
//!
//! - accepts `https://` only (plain `http://` when the caller's [`Scheme`] allows it), with a
//!   host and no `user:password@`;
//! - refuses addresses that are not public ([`is_public`]): loopback, private, link-local,
//!   CGNAT, unique-local, multicast, documentation and reserved ranges, and IPv4-mapped,
//!   NAT64 and 6to4 forms of those;
//! - resolves hostnames itself and refuses a name if **any** of its addresses is not public;
//!   the connection then goes only to the addresses it checked (the check is the resolver
//!   reqwest connects with, so a second DNS answer cannot swap in another address);
//! - follows **no redirects** (a 3xx is an answer like any other), ignores proxy variables,
//!   and caps time (connect and total) and the size of the answer it reads.
//!
//! Tests point it at local fakes with [`Policy::allow_private`]
//! (`REELFIND_OUTBOUND_ALLOW_PRIVATE`), never set in production.
use std::error::Error as StdError;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use reqwest::{Method, StatusCode};
use url::{Host, Url};

/// What the client may do.
#[derive(Debug, Clone)]
pub struct Policy {
    /// Reach non-public addresses (tests with local fakes only).
    pub allow_private: bool,
    /// Largest answer body read, in bytes.
    pub max_body: usize,
    pub connect_timeout: Duration,
    /// Whole request, answer body included.
    pub timeout: Duration,
}

impl Default for Policy {
    fn default() -> Self {
        Self {
            allow_private: false,
            max_body: 1024 * 1024,
            connect_timeout: Duration::from_secs(5),
            timeout: Duration::from_secs(15),
        }
    }
}

/// Which URL schemes one call accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    HttpsOnly,
    HttpOrHttps,
}

#[derive(Debug, thiserror::Error)]
pub enum OutboundError {
    /// The URL is not one we may fetch (scheme, credentials, no host).
    #[error("{0}")]
    BadUrl(&'static str),
    /// The host is or resolves to an address that is not public.
    #[error("the address is not a public internet address")]
    NotPublic,
    #[error("the host name could not be resolved")]
    Unresolved,
    #[error("the request timed out")]
    Timeout,
    #[error("the answer is larger than {0} bytes")]
    TooLarge(usize),
    /// Any other transport failure; the text never holds the URL.
    #[error("the request failed: {0}")]
    Network(String),
}

/// An answer, with the body read up to the policy's cap.
#[derive(Debug)]
pub struct Response {
    pub status: StatusCode,
    pub headers: reqwest::header::HeaderMap,
    pub body: Bytes,
}

/// The strict client; cheap to clone.
#[derive(Clone)]
pub struct StrictClient {
    client: reqwest::Client,
    policy: Arc<Policy>,
}

impl StrictClient {
    pub fn new(policy: Policy) -> anyhow::Result<Self> {
        let client = reqwest::Client::builder()
            .user_agent(concat!("Reelfind/", env!("CARGO_PKG_VERSION")))
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .dns_resolver(Arc::new(CheckedResolver { allow_private: policy.allow_private }))
            .connect_timeout(policy.connect_timeout)
            .timeout(policy.timeout)
            .build()?;
        Ok(Self { client, policy: Arc::new(policy) })
    }

    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// Checks `url` without any network access: scheme, credentials, host, and an address
    /// written as the host (`https://10.0.0.1/`), which no resolver sees.
    pub fn check_url(&self, url: &str, scheme: Scheme) -> Result<Url, OutboundError> {
        check_url(url, scheme, self.policy.allow_private)
    }

    /// [`StrictClient::check_url`] without a client (validating what a browser sent).
    pub fn check_url_with(url: &str, scheme: Scheme, allow_private: bool) -> Result<Url, OutboundError> {
        check_url(url, scheme, allow_private)
    }

    /// A request builder for a checked URL. Send it with [`StrictClient::execute`].
    pub fn request(&self, method: Method, url: &str, scheme: Scheme) -> Result<reqwest::RequestBuilder, OutboundError> {
        let url = self.check_url(url, scheme)?;
        Ok(self.client.request(method, url))
    }

    /// Sends and hands back the answer unread, for a caller that streams the body under a
    /// cap of its own (identify by URL writes it to disk). The connection rules (checked
    /// addresses, no redirects, no proxy, the policy's timeouts) are the same.
    pub async fn send(&self, request: reqwest::RequestBuilder) -> Result<reqwest::Response, OutboundError> {
        request.send().await.map_err(map_error)
    }

    /// Sends and reads the answer, at most [`Policy::max_body`] bytes of it.
    pub async fn execute(&self, request: reqwest::RequestBuilder) -> Result<Response, OutboundError> {
        let mut res = request.send().await.map_err(map_error)?;
        let status = res.status();
        let headers = res.headers().clone();
        let max = self.policy.max_body;
        if res.content_length().is_some_and(|n| n > max as u64) {
            return Err(OutboundError::TooLarge(max));
        }
        let mut body = Vec::new();
        while let Some(chunk) = res.chunk().await.map_err(map_error)? {
            if body.len() + chunk.len() > max {
                return Err(OutboundError::TooLarge(max));
            }
            body.extend_from_slice(&chunk);
        }
        Ok(Response { status, headers, body: body.into() })
    }
}

fn check_url(raw: &str, scheme: Scheme, allow_private: bool) -> Result<Url, OutboundError> {
    let url = Url::parse(raw.trim()).map_err(|_| OutboundError::BadUrl("not a valid URL"))?;
    match (url.scheme(), scheme) {
        ("https", _) | ("http", Scheme::HttpOrHttps) => {}
        _ => {
            return Err(OutboundError::BadUrl(match scheme {
                Scheme::HttpsOnly => "only https:// URLs are accepted",
                Scheme::HttpOrHttps => "only http:// and https:// URLs are accepted",
            }));
        }
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(OutboundError::BadUrl("URLs with a user name or password are not accepted"));
    }
    let literal = match url.host() {
        None => return Err(OutboundError::BadUrl("the URL has no host")),
        Some(Host::Ipv4(ip)) => Some(IpAddr::V4(ip)),
        Some(Host::Ipv6(ip)) => Some(IpAddr::V6(ip)),
        Some(Host::Domain(_)) => None,
    };
    if let Some(ip) = literal
        && !allow_private
        && !is_public(ip)
    {
        return Err(OutboundError::NotPublic);
    }
    Ok(url)
}

/// Resolves with the system resolver and lets through only names whose every address is
/// public (or anything, with `allow_private`).
struct CheckedResolver {
    allow_private: bool,
}

impl Resolve for CheckedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let allow_private = self.allow_private;
        Box::pin(async move {
            let host = name.as_str().to_owned();
            let addrs: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), 0))
                .await
                .map_err(|_| Box::new(OutboundError::Unresolved) as Box<dyn StdError + Send + Sync>)?
                .collect();
            if addrs.is_empty() {
                return Err(Box::new(OutboundError::Unresolved) as Box<dyn StdError + Send + Sync>);
            }
            if !allow_private && addrs.iter().any(|a| !is_public(a.ip())) {
                tracing::warn!(host, "refused an outbound request: the name resolves to a non-public address");
                return Err(Box::new(OutboundError::NotPublic) as Box<dyn StdError + Send + Sync>);
            }
            Ok(Box::new(addrs.into_iter()) as Addrs)
        })
    }
}

/// Our resolver's verdict travels inside reqwest's error; find it, else describe the error
/// without its URL.
pub fn map_error(e: reqwest::Error) -> OutboundError {
    if e.is_timeout() {
        return OutboundError::Timeout;
    }
    let mut source: Option<&(dyn StdError + 'static)> = e.source();
    while let Some(s) = source {
        if let Some(ours) = s.downcast_ref::<OutboundError>() {
            return match ours {
                OutboundError::NotPublic => OutboundError::NotPublic,
                _ => OutboundError::Unresolved,
            };
        }
        source = s.source();
    }
    OutboundError::Network(e.without_url().to_string())
}

/// Whether `ip` is an ordinary public internet address.
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => is_public_v6(v6),
    }
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    !(a == 0                                   // "this network"
        || a == 10                             // private
        || a == 127                            // loopback
        || (a == 100 && (64..128).contains(&b)) // CGNAT 100.64/10
        || (a == 169 && b == 254)              // link-local (cloud metadata)
        || (a == 172 && (16..32).contains(&b)) // private
        || (a == 192 && b == 0 && c == 0)      // IETF protocol assignments
        || (a == 192 && b == 0 && c == 2)      // TEST-NET-1
        || (a == 192 && b == 88 && c == 99)    // 6to4 relay anycast
        || (a == 192 && b == 168)              // private
        || (a == 198 && (b == 18 || b == 19))  // benchmarking
        || (a == 198 && b == 51 && c == 100)   // TEST-NET-2
        || (a == 203 && b == 0 && c == 113)    // TEST-NET-3
        || a >= 224) // multicast, reserved, broadcast
}

fn is_public_v6(ip: Ipv6Addr) -> bool {
    let s = ip.segments();
    if let Some(v4) = ip.to_ipv4_mapped() {
        return is_public_v4(v4);
    }
    // NAT64 (64:ff9b::/96) carries an IPv4 address in its last 32 bits.
    if s[0] == 0x64 && s[1] == 0xff9b && s[2..6] == [0, 0, 0, 0] {
        return is_public_v4(Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8));
    }
    // 6to4 (2002::/16) carries one in bits 16-48.
    if s[0] == 0x2002 {
        return is_public_v4(Ipv4Addr::new((s[1] >> 8) as u8, s[1] as u8, (s[2] >> 8) as u8, s[2] as u8));
    }
    !(ip.is_unspecified()
        || ip.is_loopback()
        || s[0..6] == [0, 0, 0, 0, 0, 0]        // IPv4-compatible (deprecated) and the like
        || (s[0] == 0x64 && s[1] == 0xff9b)     // local-use NAT64 64:ff9b:1::/48
        || (s[0] == 0x100 && s[1..4] == [0, 0, 0]) // discard 100::/64
        || (s[0] == 0x2001 && s[1] < 0x200)     // IETF protocol assignments, Teredo
        || (s[0] == 0x2001 && s[1] == 0xdb8)    // documentation
        || (s[0] & 0xfe00) == 0xfc00            // unique local fc00::/7
        || (s[0] & 0xffc0) == 0xfe80            // link-local
        || (s[0] & 0xffc0) == 0xfec0            // site-local (deprecated)
        || (s[0] & 0xff00) == 0xff00) // multicast
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_public_addresses_pass() {
        for ip in ["93.184.216.34", "8.8.8.8", "2606:4700:4700::1111", "2a00:1450:4001::200e", "::ffff:8.8.8.8"] {
            assert!(is_public(ip.parse().unwrap()), "{ip} is public");
        }
        for ip in [
            "127.0.0.1",
            "127.8.9.10",
            "10.1.2.3",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "100.127.255.254",
            "0.0.0.0",
            "0.1.2.3",
            "224.0.0.1",
            "255.255.255.255",
            "198.18.0.1",
            "192.0.2.1",
            "::",
            "::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "::ffff:169.254.169.254",
            "::127.0.0.1",
            "64:ff9b::7f00:1",
            "64:ff9b::a9fe:a9fe",
            "2002:7f00:1::1",
            "2002:a00:1::1",
            "fc00::1",
            "fd12:3456::1",
            "fe80::1",
            "fec0::1",
            "ff02::1",
            "2001:db8::1",
            "2001::1",
        ] {
            assert!(!is_public(ip.parse().unwrap()), "{ip} is not public");
        }
    }

    #[test]
    fn urls_are_checked_before_any_network() {
        let ok = |u: &str, s| check_url(u, s, false).map(|u| u.to_string());
        assert!(ok("https://push.example.com/send/abc", Scheme::HttpsOnly).is_ok());
        assert!(matches!(ok("http://push.example.com/x", Scheme::HttpsOnly), Err(OutboundError::BadUrl(_))));
        assert!(ok("http://push.example.com/x", Scheme::HttpOrHttps).is_ok());
        assert!(matches!(ok("ftp://push.example.com/x", Scheme::HttpOrHttps), Err(OutboundError::BadUrl(_))));
        assert!(matches!(ok("https://u:p@push.example.com/x", Scheme::HttpsOnly), Err(OutboundError::BadUrl(_))));
        for u in [
            "https://127.0.0.1/x",
            "https://[::1]/x",
            "https://[::ffff:7f00:1]/x",
            "https://169.254.169.254/latest/meta-data",
            "https://0x7f000001/x",
            "https://2130706433/x",
            "https://10.0.0.1:8443/x",
        ] {
            assert!(matches!(ok(u, Scheme::HttpsOnly), Err(OutboundError::NotPublic)), "{u}");
        }
        assert!(check_url("https://127.0.0.1/x", Scheme::HttpsOnly, true).is_ok());
    }

    #[tokio::test]
    async fn a_name_that_resolves_to_loopback_is_refused() {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = StrictClient::new(Policy::default()).unwrap();
        let req = client.request(Method::GET, "https://localhost:9/x", Scheme::HttpsOnly).unwrap();
        let err = client.execute(req).await.unwrap_err();
        assert!(matches!(err, OutboundError::NotPublic), "{err:?}");
    }
}
