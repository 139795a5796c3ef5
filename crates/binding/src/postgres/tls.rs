//! libpq's TLS options on the shared rustls stack ([`crate::tls`]): `sslmode` (disable, allow,
//! prefer, require, verify-ca, verify-full), `sslrootcert` (a file, or `system`), `sslcert` and
//! `sslkey`, from the URL's query or else from PGSSLMODE, PGSSLROOTCERT, PGSSLCERT and PGSSLKEY,
//! with libpq's defaults (~/.postgresql/root.crt, postgresql.crt, postgresql.key).
//!
//! libpq's definitions, kept: a root certificate file that exists makes `prefer` and `require`
//! check the chain as `verify-ca` does; `verify-ca` and `verify-full` without one are refused;
//! `sslrootcert=system` trusts the public CAs and allows only `verify-full`. tokio-postgres reads
//! `sslmode` itself but knows only disable, prefer and require and no file options: they are taken
//! off the URL here and the driver is told the mode it knows.

use std::future::Future;
use std::io;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use rustls::pki_types::ServerName;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio_postgres::config::SslMode;
use tokio_postgres::tls::{ChannelBinding, MakeTlsConnect, TlsConnect};

use crate::tls::{TlsSettings, Verify};
use crate::BindingError;

/// The URL's TLS parameters, which tokio-postgres would refuse or read differently.
const PARAMETERS: [&str; 4] = ["sslmode", "sslrootcert", "sslcert", "sslkey"];

/// What libpq's options asked for: the driver's mode, and the connector that makes the session.
#[derive(Clone)]
pub struct PgTls {
    pub mode: SslMode,
    pub connector: MakeRustls,
}

impl PgTls {
    /// `url` without its TLS parameters, and what they (or the environment, or libpq's default
    /// files) ask for. `describe` is the redacted URL, for messages.
    pub fn from_url(url: &url::Url, describe: &str) -> Result<(url::Url, PgTls), BindingError> {
        let env = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        let home = std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".postgresql"));
        let (rest, given) = crate::tls::take_parameters(url, &PARAMETERS);
        let take = |k: &str, var: &str| {
            let given = given.get(k).filter(|v| !v.is_empty()).cloned();
            given.or_else(|| env(var))
        };
        let options = Options {
            mode: take("sslmode", "PGSSLMODE"),
            root: take("sslrootcert", "PGSSLROOTCERT"),
            cert: take("sslcert", "PGSSLCERT"),
            key: take("sslkey", "PGSSLKEY"),
        };
        let tls = options.resolve(home.as_deref()).map_err(|why| {
            BindingError::Config(format!("invalid database URL '{describe}': {why}"))
        })?;
        Ok((rest, tls))
    }
}

/// libpq's four TLS options as given (URL first, then environment).
struct Options {
    mode: Option<String>,
    root: Option<String>,
    cert: Option<String>,
    key: Option<String>,
}

impl Options {
    /// libpq's rules; `home` is ~/.postgresql, where libpq looks for the default files.
    fn resolve(self, home: Option<&std::path::Path>) -> Result<PgTls, String> {
        let system = self.root.as_deref() == Some("system");
        // libpq: sslrootcert=system makes verify-full the default and refuses weaker modes.
        let mode = self
            .mode
            .as_deref()
            .unwrap_or(if system { "verify-full" } else { "prefer" });
        let (driver_mode, full) = match mode {
            "disable" => (SslMode::Disable, false),
            // libpq's `allow` tries plain first; tokio-postgres cannot, and plain it is unless the
            // server insists, which then fails (said in docs/bindings.md).
            "allow" => (SslMode::Disable, false),
            "prefer" => (SslMode::Prefer, false),
            "require" | "verify-ca" => (SslMode::Require, false),
            "verify-full" => (SslMode::Require, true),
            other => {
                return Err(format!(
                "sslmode '{other}' is not one of disable, allow, prefer, require, verify-ca, verify-full"
            ))
            }
        };
        if system && !full {
            return Err(format!(
                "weak sslmode '{mode}' may not be used with sslrootcert=system (use verify-full)"
            ));
        }
        let default_file = |name: &str| home.map(|h| h.join(name)).filter(|p| p.is_file());
        let root = match self.root {
            Some(r) if r == "system" => None,
            Some(r) => Some(PathBuf::from(r)),
            None => default_file("root.crt"),
        };
        let verify = if full {
            Verify::Full
        } else if root.is_some() || mode == "verify-ca" {
            // A root certificate makes libpq check the chain in every mode that encrypts.
            Verify::Ca
        } else {
            Verify::Nothing
        };
        if verify != Verify::Nothing && root.is_none() && !system {
            return Err(format!(
                "sslmode '{mode}' needs a root certificate: sslrootcert=FILE (or \
                 ~/.postgresql/root.crt, or sslrootcert=system for the public CAs)"
            ));
        }
        let cert = self
            .cert
            .map(PathBuf::from)
            .or_else(|| default_file("postgresql.crt"));
        let client_cert = match cert {
            None => None,
            Some(cert) => {
                let key = self
                    .key
                    .map(PathBuf::from)
                    .or_else(|| home.map(|h| h.join("postgresql.key")))
                    .ok_or("sslcert without sslkey")?;
                Some((cert, key))
            }
        };
        let settings = TlsSettings {
            verify,
            ca_file: root,
            client_cert,
        };
        // Files are read when the mode may encrypt; `disable` never touches them (as libpq).
        let config = match driver_mode {
            SslMode::Disable => None,
            _ => Some(settings.client_config().map_err(|e| e.to_string())?),
        };
        Ok(PgTls {
            mode: driver_mode,
            connector: MakeRustls { config },
        })
    }
}

/// tokio-postgres's TLS connector on rustls (no channel binding: SCRAM without -PLUS, which
/// libpq's default `channel_binding=prefer` also accepts).
#[derive(Clone)]
pub struct MakeRustls {
    /// None: `sslmode=disable`, never asked to encrypt.
    config: Option<Arc<rustls::ClientConfig>>,
}

impl<S> MakeTlsConnect<S> for MakeRustls
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    type Stream = RustlsStream<S>;
    type TlsConnect = RustlsConnect;
    type Error = io::Error;

    fn make_tls_connect(&mut self, host: &str) -> Result<RustlsConnect, io::Error> {
        // A Unix socket has no host name: the server declines TLS there and no session is made.
        let name = ServerName::try_from(host.to_string()).ok();
        Ok(RustlsConnect {
            config: self.config.clone(),
            name,
        })
    }
}

pub struct RustlsConnect {
    config: Option<Arc<rustls::ClientConfig>>,
    name: Option<ServerName<'static>>,
}

impl<S> TlsConnect<S> for RustlsConnect
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    type Stream = RustlsStream<S>;
    type Error = io::Error;
    type Future = Pin<Box<dyn Future<Output = io::Result<RustlsStream<S>>> + Send>>;

    fn connect(self, stream: S) -> Self::Future {
        Box::pin(async move {
            let (Some(config), Some(name)) = (self.config, self.name) else {
                return Err(io::Error::other("TLS asked for without a host name"));
            };
            let stream = tokio_rustls::TlsConnector::from(config)
                .connect(name, stream)
                .await?;
            Ok(RustlsStream(stream))
        })
    }
}

pub struct RustlsStream<S>(tokio_rustls::client::TlsStream<S>);

impl<S: AsyncRead + AsyncWrite + Unpin> tokio_postgres::tls::TlsStream for RustlsStream<S> {
    fn channel_binding(&self) -> ChannelBinding {
        ChannelBinding::none()
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> AsyncRead for RustlsStream<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_read(cx, buf)
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> AsyncWrite for RustlsStream<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.0).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve(mode: Option<&str>, root: Option<&str>) -> Result<PgTls, String> {
        Options {
            mode: mode.map(String::from),
            root: root.map(String::from),
            cert: None,
            key: None,
        }
        .resolve(None)
    }

    #[test]
    fn libpq_modes_map_onto_the_driver_and_the_checks() {
        assert_eq!(resolve(None, None).unwrap().mode, SslMode::Prefer);
        assert_eq!(resolve(Some("disable"), None).unwrap().mode, SslMode::Disable);
        assert_eq!(resolve(Some("require"), None).unwrap().mode, SslMode::Require);
        assert_eq!(
            resolve(Some("verify-full"), Some("system")).unwrap().mode,
            SslMode::Require
        );
        assert_eq!(resolve(None, Some("system")).unwrap().mode, SslMode::Require);
    }

    #[test]
    fn libpq_refusals_are_kept() {
        let e = resolve(Some("verify-ca"), None).err().unwrap();
        assert!(e.contains("needs a root certificate"), "{e}");
        let e = resolve(Some("require"), Some("system")).err().unwrap();
        assert!(e.contains("weak sslmode 'require'"), "{e}");
        let e = resolve(Some("sometimes"), None).err().unwrap();
        assert!(e.contains("sslmode 'sometimes'"), "{e}");
        let e = resolve(Some("require"), Some("/nowhere/root.crt")).err().unwrap();
        assert!(e.contains("/nowhere/root.crt"), "{e}");
    }

    #[test]
    fn the_tls_parameters_leave_the_url_and_the_others_stay() {
        let url = url::Url::parse(
            "postgres://u@h:5/db?sslmode=require&application_name=x&sslrootcert=",
        )
        .unwrap();
        let (rest, tls) = PgTls::from_url(&url, "postgres://u@h:5/db").unwrap();
        assert_eq!(rest.as_str(), "postgres://u@h:5/db?application_name=x");
        assert_eq!(tls.mode, SslMode::Require);
    }
}
