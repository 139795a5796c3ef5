//! The password redis-cli takes from its environment: `REDISCLI_AUTH`, used when the URL has none,
//! so no password needs to be on the command line.

/// The variable redis-cli reads its password from.
const PASSWORD_ENV: &str = "REDISCLI_AUTH";

/// `url` with `$REDISCLI_AUTH` as its password when it names none (an empty value counts as unset).
pub(super) fn with_env_password(url: &url::Url) -> url::Url {
    with_password_from(url, std::env::var(PASSWORD_ENV).ok())
}

fn with_password_from(url: &url::Url, password: Option<String>) -> url::Url {
    let mut u = url.clone();
    if u.password().is_none() {
        if let Some(p) = password.filter(|p| !p.is_empty()) {
            // Percent-encoded by the url crate, decoded again by the redis crate.
            let _ = u.set_password(Some(&p));
        }
    }
    u
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_url_s_password_wins_and_the_variable_fills_a_missing_one() {
        let parse = |s: &str| url::Url::parse(s).unwrap();
        let given = with_password_from(&parse("redis://:inurl@h:1"), Some("env".into()));
        assert_eq!(given.password(), Some("inurl"));
        let filled = with_password_from(&parse("redis://h:1/0"), Some("p@ss:w/rd".into()));
        assert_eq!(filled.password(), Some("p%40ss%3Aw%2Frd"));
        assert_eq!(filled.host_str(), Some("h"));
        assert_eq!(with_password_from(&parse("redis://h:1"), Some(String::new())).password(), None);
    }
}
