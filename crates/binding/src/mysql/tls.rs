//! MySQL/MariaDB over TLS as the mysql client takes it: `ssl-mode` (DISABLED, PREFERRED, REQUIRED,
//! VERIFY_CA, VERIFY_IDENTITY), `ssl-ca`, `ssl-cert` and `ssl-key` as URL query parameters (the
//! client's own option names; `ssl_mode` spelled with underscores too, as option files allow).
//! mysql_async makes the session on the shared rustls stack (ring); the files are checked by
//! [`crate::tls`] first, so a bad one is a configuration error that names it.
//!
//! The mysql client's definitions, kept: PREFERRED is the default and falls back to plain text
//! when the server has no TLS; PREFERRED and REQUIRED encrypt without checking the certificate;
//! `ssl-ca` without `ssl-mode` means VERIFY_CA; VERIFY_CA checks the chain, VERIFY_IDENTITY the
//! chain and the host name.

use std::path::PathBuf;

use mysql_async::{ClientIdentity, Conn, Opts, OptsBuilder, SslOpts};

use crate::BindingError;

/// The URL's TLS parameters, taken off before mysql_async parses it (it refuses unknown ones).
const PARAMETERS: [&str; 8] = [
    "ssl-mode", "ssl_mode", "ssl-ca", "ssl_ca", "ssl-cert", "ssl_cert", "ssl-key", "ssl_key",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Disabled,
    Preferred,
    Required,
    VerifyCa,
    VerifyIdentity,
}

/// What the URL asked for.
#[derive(Clone)]
pub struct MysqlTls {
    mode: Mode,
    ssl: Option<SslOpts>,
}

impl MysqlTls {
    /// `url` without its TLS parameters, and what they ask for.
    pub fn from_url(url: &url::Url, describe: &str) -> Result<(url::Url, MysqlTls), BindingError> {
        let bad =
            |why: String| BindingError::Config(format!("invalid database URL '{describe}': {why}"));
        let (rest, given) = crate::tls::take_parameters(url, &PARAMETERS);
        let file = |k: &str| given.get(k).filter(|v| !v.is_empty()).map(PathBuf::from);
        let ca = file("ssl-ca");
        let mode = match given.get("ssl-mode").map(|m| m.to_ascii_uppercase()).as_deref() {
            None if ca.is_some() => Mode::VerifyCa,
            None | Some("PREFERRED") => Mode::Preferred,
            Some("DISABLED") => Mode::Disabled,
            Some("REQUIRED") => Mode::Required,
            Some("VERIFY_CA") => Mode::VerifyCa,
            Some("VERIFY_IDENTITY") => Mode::VerifyIdentity,
            Some(other) => {
                return Err(bad(format!(
                "ssl-mode '{other}' is not one of DISABLED, PREFERRED, REQUIRED, VERIFY_CA, VERIFY_IDENTITY"
            )))
            }
        };
        if mode == Mode::Disabled {
            return Ok((rest, MysqlTls { mode, ssl: None }));
        }
        let mut ssl = SslOpts::default();
        if let Some(ca) = &ca {
            crate::tls::certificates(ca)?;
            ssl = ssl
                .with_root_certs(vec![ca.clone().into()])
                .with_disable_built_in_roots(true);
        }
        match (file("ssl-cert"), file("ssl-key")) {
            (None, None) => {}
            (Some(cert), Some(key)) => {
                let mut check = crate::tls::TlsSettings::new(crate::tls::Verify::Nothing);
                check.client_cert = Some((cert.clone(), key.clone()));
                check.client_config()?;
                ssl = ssl.with_client_identity(Some(ClientIdentity::new(
                    cert.into(),
                    key.into(),
                )));
            }
            _ => return Err(bad("ssl-cert and ssl-key go together".into())),
        }
        ssl = match mode {
            Mode::Preferred | Mode::Required => ssl.with_danger_accept_invalid_certs(true),
            Mode::VerifyCa => ssl.with_danger_skip_domain_validation(true),
            _ => ssl,
        };
        Ok((
            rest,
            MysqlTls {
                mode,
                ssl: Some(ssl),
            },
        ))
    }

    /// A connection with `opts` and this TLS; PREFERRED falls back to plain text when the server
    /// offers no TLS.
    pub async fn connect(&self, opts: Opts) -> Result<Conn, String> {
        let with_tls = OptsBuilder::from_opts(opts.clone()).ssl_opts(self.ssl.clone());
        match Conn::new(with_tls).await {
            Err(mysql_async::Error::Driver(mysql_async::DriverError::NoClientSslFlagFromServer))
                if self.mode == Mode::Preferred =>
            {
                Conn::new(opts).await.map_err(|e| e.to_string())
            }
            Err(mysql_async::Error::Driver(mysql_async::DriverError::NoClientSslFlagFromServer)) => {
                Err("the server does not take TLS (ssl-mode asks for it)".into())
            }
            other => other.map_err(|e| crate::tls::explain(&e.to_string())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode(url: &str) -> Result<Mode, BindingError> {
        MysqlTls::from_url(&url::Url::parse(url).unwrap(), url).map(|(_, t)| t.mode)
    }

    #[test]
    fn the_mysql_clients_modes_and_defaults() {
        assert_eq!(mode("mysql://h/db").unwrap(), Mode::Preferred);
        assert_eq!(mode("mysql://h/db?ssl-mode=disabled").unwrap(), Mode::Disabled);
        assert_eq!(mode("mysql://h/db?ssl_mode=VERIFY_IDENTITY").unwrap(), Mode::VerifyIdentity);
        let e = mode("mysql://h/db?ssl-mode=sometimes").err().unwrap().to_string();
        assert!(e.contains("ssl-mode 'SOMETIMES'"), "{e}");
        let e = mode("mysql://h/db?ssl-ca=/nowhere/ca.pem").err().unwrap().to_string();
        assert!(e.contains("/nowhere/ca.pem"), "{e}");
        let (rest, _) = MysqlTls::from_url(
            &url::Url::parse("mysql://h/db?ssl-mode=REQUIRED&prefer_socket=false").unwrap(),
            "",
        )
        .unwrap();
        assert_eq!(rest.as_str(), "mysql://h/db?prefer_socket=false");
    }
}
