//! What a PostgreSQL URL leaves out, found where libpq finds it: `PGHOST`, `PGPORT`, `PGUSER`,
//! `PGDATABASE`, `PGPASSWORD`, then the password file (`PGPASSFILE`, else `~/.pgpass`), so a user's
//! psql setup works as it is and no password needs to be on the command line.
//!
//! The URL's own values come first, as in libpq. The password file's format and rules are libpq's
//! (https://www.postgresql.org/docs/current/libpq-pgpass.html): `host:port:database:username:password`
//! lines, `*` matching anything in the first four fields, `\:` and `\\` escapes, `#` comment lines,
//! the first matching line wins, and a file readable or writable by group or others is ignored.

use std::path::{Path, PathBuf};

use tokio_postgres::config::Host;
use tokio_postgres::Config;

/// libpq's default port, for a password file's port field when the URL names none.
const DEFAULT_PORT: u16 = 5432;

/// Socket directories libpq is built with: upstream's `/tmp`, Debian's and Red Hat's
/// `/var/run/postgresql` (`/run/postgresql`). A connection through one of them matches a password
/// file's `localhost` lines, as libpq's does through its own default directory.
const DEFAULT_SOCKET_DIRS: [&str; 3] = ["/var/run/postgresql", "/run/postgresql", "/tmp"];

/// Fills `config` from the process environment and the password file. Returns a note for a
/// connection error when a password file was ignored (its mode), since the server's "password
/// missing" alone would not say why.
pub(super) fn complete(config: &mut Config) -> Option<String> {
    complete_with(config, &|name| std::env::var(name).ok())
}

/// [`complete`] with the environment given (tests).
pub(super) fn complete_with(
    config: &mut Config,
    env: &dyn Fn(&str) -> Option<String>,
) -> Option<String> {
    let set = |name: &str| env(name).filter(|v| !v.is_empty());
    if config.get_ports().is_empty() {
        if let Some(ports) = set("PGPORT") {
            for port in ports.split(',') {
                // A bad PGPORT is left to the default port, as libpq would refuse it at connect.
                if let Ok(p) = port.trim().parse::<u16>() {
                    config.port(p);
                }
            }
        }
    }
    if config.get_hosts().is_empty() && config.get_hostaddrs().is_empty() {
        match set("PGHOST") {
            Some(hosts) => {
                for host in hosts.split(',') {
                    config.host(host.trim());
                }
            }
            None => {
                let port = config.get_ports().first().copied().unwrap_or(DEFAULT_PORT);
                config.host(default_host(port));
            }
        }
    }
    if config.get_user().is_none() {
        if let Some(user) = set("PGUSER") {
            config.user(user);
        }
    }
    if config.get_dbname().is_none() {
        if let Some(db) = set("PGDATABASE") {
            config.dbname(db);
        }
    }
    if config.get_password().is_some() {
        return None;
    }
    if let Some(password) = env("PGPASSWORD") {
        config.password(password);
        return None;
    }
    let file = match set("PGPASSFILE") {
        Some(path) => PathBuf::from(path),
        None => PathBuf::from(set("HOME")?).join(".pgpass"),
    };
    let text = match read_private(&file) {
        Ok(Some(text)) => text,
        Ok(None) => return None,
        Err(note) => return Some(note),
    };
    let user = match config.get_user() {
        Some(u) => u.to_string(),
        None => whoami::username().ok()?,
    };
    let host = match config.get_hosts().first() {
        Some(Host::Tcp(name)) => name.clone(),
        Some(Host::Unix(dir)) if is_default_socket_dir(dir) => "localhost".to_string(),
        Some(Host::Unix(dir)) => dir.display().to_string(),
        None => config
            .get_hostaddrs()
            .first()
            .map_or_else(|| "localhost".to_string(), |a| a.to_string()),
    };
    let port = config
        .get_ports()
        .first()
        .copied()
        .unwrap_or(DEFAULT_PORT)
        .to_string();
    let database = config.get_dbname().unwrap_or(&user).to_string();
    if let Some(password) = password_from_file(&text, [&host, &port, &database, &user]) {
        config.password(password);
    }
    None
}

/// The URL without libpq's `host`, `hostaddr` and `port` parameters: for a copy given another
/// server's host and port (a read replica, one of several masters).
pub(super) fn without_host_parameters(url: &url::Url) -> url::Url {
    let mut u = url.clone();
    let kept: Vec<(String, String)> = url
        .query_pairs()
        .filter(|(k, _)| !matches!(k.as_ref(), "host" | "hostaddr" | "port"))
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect();
    if kept.is_empty() {
        u.set_query(None);
    } else {
        u.query_pairs_mut().clear().extend_pairs(kept);
    }
    u
}

/// `host:port` (or `socket-dir:port`) of the servers `config` connects to, for messages.
pub(super) fn address(config: &Config) -> String {
    let ports = config.get_ports();
    config
        .get_hosts()
        .iter()
        .enumerate()
        .map(|(i, host)| {
            let port = ports
                .get(i)
                .or(ports.first())
                .copied()
                .unwrap_or(DEFAULT_PORT);
            match host {
                Host::Tcp(name) => format!("{name}:{port}"),
                Host::Unix(dir) => format!("{}:{port}", dir.display()),
            }
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// Where libpq connects without a host: its socket directory, when a server listens there on
/// `port`; otherwise localhost over TCP (a build without a socket directory, as on Windows).
fn default_host(port: u16) -> String {
    DEFAULT_SOCKET_DIRS
        .iter()
        .find(|dir| Path::new(dir).join(format!(".s.PGSQL.{port}")).exists())
        .map_or_else(|| "localhost".to_string(), |dir| dir.to_string())
}

fn is_default_socket_dir(dir: &Path) -> bool {
    DEFAULT_SOCKET_DIRS
        .iter()
        .any(|d| Path::new(d) == dir.components().collect::<PathBuf>())
}

/// The password file's text; None when there is none (or it is no regular file, which libpq skips
/// too); Err with a note when its mode lets group or others read it, which libpq refuses.
fn read_private(file: &Path) -> Result<Option<String>, String> {
    let Ok(meta) = std::fs::metadata(file) else {
        return Ok(None);
    };
    if !meta.is_file() {
        return Ok(None);
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = meta.permissions().mode();
        if mode & 0o077 != 0 {
            return Err(format!(
                "password file \"{}\" ignored: it has group or world access (mode {:o}); permissions should be u=rw (0600) or less, as libpq requires",
                file.display(),
                mode & 0o777
            ));
        }
    }
    Ok(std::fs::read_to_string(file).ok())
}

/// The password of the first line of a password file whose host, port, database and user fields
/// match `wanted` (each field literal or `*`).
pub(super) fn password_from_file(text: &str, wanted: [&str; 4]) -> Option<String> {
    text.lines()
        .map(|line| line.trim_end_matches('\r'))
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .find_map(|line| {
            let fields = split_fields(line);
            if fields.len() < 5 {
                return None;
            }
            let matches = fields[..4]
                .iter()
                .zip(wanted)
                .all(|((text, literal_star), want)| {
                    (text == "*" && !literal_star) || text == want
                });
            // The password is the rest of the line: a fifth unescaped ':' belongs to it.
            matches.then(|| fields[4..].iter().map(|(f, _)| f.as_str()).collect::<Vec<_>>().join(":"))
        })
}

/// A line's `:`-separated fields with `\` escapes removed; each with whether it was an escaped
/// `\*` (a literal star, not the wildcard).
fn split_fields(line: &str) -> Vec<(String, bool)> {
    let mut fields = vec![(String::new(), false)];
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        let field = fields.last_mut().expect("one field at least");
        match c {
            '\\' => {
                if let Some(next) = chars.next() {
                    if next == '*' && field.0.is_empty() {
                        field.1 = true;
                    }
                    field.0.push(next);
                }
            }
            ':' => fields.push((String::new(), false)),
            c => field.0.push(c),
        }
    }
    fields
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "# comment:line:that:looks:like-one\n\
        db.example:5432:ycsb:alice:first\n\
        *:*:ycsb:alice:wild\n\
        host\\:with\\:colons:6543:*:bob:esc\\:aped\\\\pw\n\
        *:*:*:carol:pass:with:colons\r\n\
        short:line\n";

    fn lookup(host: &str, port: &str, db: &str, user: &str) -> Option<String> {
        password_from_file(FILE, [host, port, db, user])
    }

    #[test]
    fn the_first_matching_line_wins_and_stars_match_anything() {
        assert_eq!(lookup("db.example", "5432", "ycsb", "alice").as_deref(), Some("first"));
        assert_eq!(lookup("elsewhere", "7000", "ycsb", "alice").as_deref(), Some("wild"));
        assert_eq!(lookup("elsewhere", "7000", "other", "alice"), None);
        assert_eq!(lookup("comment", "line", "that", "looks"), None);
    }

    #[test]
    fn escapes_and_colons_in_the_password() {
        assert_eq!(
            lookup("host:with:colons", "6543", "any", "bob").as_deref(),
            Some("esc:aped\\pw")
        );
        assert_eq!(lookup("h", "1", "d", "carol").as_deref(), Some("pass:with:colons"));
    }

    #[test]
    fn an_escaped_star_is_a_literal_star() {
        let text = "\\*:*:*:*:literal\n*:*:*:*:wild\n";
        assert_eq!(password_from_file(text, ["h", "1", "d", "u"]).as_deref(), Some("wild"));
        assert_eq!(password_from_file(text, ["*", "1", "d", "u"]).as_deref(), Some("literal"));
    }

    fn env_of(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn the_url_wins_over_the_environment() {
        let mut c: Config = "postgres://u:pw@h:7/d".parse().unwrap();
        let env = env_of(&[
            ("PGHOST", "other"),
            ("PGPORT", "9"),
            ("PGUSER", "x"),
            ("PGDATABASE", "y"),
            ("PGPASSWORD", "z"),
        ]);
        assert_eq!(complete_with(&mut c, &env), None);
        assert_eq!(c.get_hosts(), &[Host::Tcp("h".into())]);
        assert_eq!(c.get_ports(), &[7]);
        assert_eq!(c.get_user(), Some("u"));
        assert_eq!(c.get_dbname(), Some("d"));
        assert_eq!(c.get_password(), Some(&b"pw"[..]));
    }

    #[test]
    fn the_environment_fills_what_the_url_leaves_out() {
        let mut c: Config = "postgres:///".parse().unwrap();
        let env = env_of(&[
            ("PGHOST", "/run/x,h2"),
            ("PGPORT", "6000"),
            ("PGUSER", "x"),
            ("PGDATABASE", "y"),
            ("PGPASSWORD", "z"),
        ]);
        assert_eq!(complete_with(&mut c, &env), None);
        assert_eq!(
            c.get_hosts(),
            &[Host::Unix("/run/x".into()), Host::Tcp("h2".into())]
        );
        assert_eq!(c.get_ports(), &[6000]);
        assert_eq!(c.get_user(), Some("x"));
        assert_eq!(c.get_dbname(), Some("y"));
        assert_eq!(c.get_password(), Some(&b"z"[..]));
    }

    #[test]
    fn a_password_file_open_to_others_is_ignored_with_a_note() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("pgpass");
        std::fs::write(&file, "*:*:*:*:secret\n").unwrap();
        let path = file.display().to_string();
        let env = move |name: &str| match name {
            "PGPASSFILE" => Some(path.clone()),
            _ => None,
        };
        let parsed = || "postgres://u@localhost/d".parse::<Config>().unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        let mut c = parsed();
        assert_eq!(complete_with(&mut c, &env), None);
        assert_eq!(c.get_password(), Some(&b"secret"[..]));
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        let mut c = parsed();
        let note = complete_with(&mut c, &env).expect("a note");
        assert!(note.contains("group or world access"), "{note}");
        assert_eq!(c.get_password(), None);
    }
}
