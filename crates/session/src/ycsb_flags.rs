//! YCSB's single-dash flags as YCSB users type them (`-threads 8 -target 500 -s`): translated to
//! scalebench's before clap parses, or, where scalebench says it differently, answered with one
//! line naming what to type (exit 2), never clap's "unexpected argument '-t'".

use std::ffi::OsString;

/// What one YCSB flag becomes in the command `sub` (the subcommand, if any).
enum Meaning {
    /// The same flag under scalebench's name.
    Renamed(&'static str),
    /// What scalebench already does: dropped.
    Default,
    /// Said differently here: the one line that says how.
    Refused(String),
}

fn meaning(flag: &str, value: Option<&str>, sub: Option<&str>) -> Option<Meaning> {
    Some(match flag {
        "-threads" => Meaning::Renamed("--threads"),
        "-target" => Meaning::Renamed("--target"),
        // YCSB's status line every 10 s: scalebench's progress display, its status line every
        // --status-interval (10 s) when standard error is not a terminal.
        "-s" => Meaning::Default,
        "-load" if sub == Some("load") => Meaning::Default,
        "-load" => Meaning::Refused(
            "YCSB's -load is scalebench's load command: `scalebench load WORKLOAD ...` \
             (or `scalebench run --load` to load, then run)"
                .into(),
        ),
        "-t" if sub == Some("run") => Meaning::Default,
        "-t" => Meaning::Refused(
            "YCSB's -t (the transaction phase) is scalebench's run command: `scalebench run WORKLOAD ...`"
                .into(),
        ),
        // YCSB's -db names a Java class; scalebench's --db the database's URL.
        "-db" => match value {
            Some(v) if v.contains("://") => Meaning::Renamed("--db"),
            Some(v) => Meaning::Refused(format!(
                "invalid value '{v}' for YCSB's '-db': scalebench picks the binding by the URL \
                 of --db (e.g. --db postgres://user@host/db; `scalebench bindings` lists them)"
            )),
            None => Meaning::Refused(
                "YCSB's -db needs a value: scalebench's --db takes the database's URL".into(),
            ),
        },
        _ => return None,
    })
}

/// `argv` with YCSB's flags in scalebench's words, or the line that refuses one. Nothing after a
/// `--` is touched (a client's own command line), nor the value of an option.
pub fn translate(argv: Vec<OsString>) -> Result<Vec<OsString>, String> {
    let sub = argv
        .iter()
        .skip(1)
        .filter_map(|a| a.to_str())
        .find(|a| !a.starts_with('-'))
        .map(str::to_string);
    let mut out = Vec::with_capacity(argv.len());
    let mut rest = argv.into_iter().peekable();
    while let Some(arg) = rest.next() {
        let Some(flag) = arg.to_str().filter(|_| !out.is_empty()) else {
            out.push(arg);
            continue;
        };
        if flag == "--" {
            out.push(arg);
            out.extend(rest);
            break;
        }
        let value = rest.peek().and_then(|v| v.to_str()).map(str::to_string);
        match meaning(flag, value.as_deref(), sub.as_deref()) {
            None => {
                // The value of a short option is never read as a flag (`-p -s`, `-o -t`).
                let takes_value = matches!(flag, "-p" | "-P" | "-o");
                out.push(arg);
                if takes_value {
                    out.extend(rest.next());
                }
            }
            Some(Meaning::Renamed(to)) => out.push(to.into()),
            Some(Meaning::Default) => {}
            Some(Meaning::Refused(line)) => return Err(line),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::translate;

    fn t(args: &[&str]) -> Result<Vec<String>, String> {
        let argv = std::iter::once("scalebench")
            .chain(args.iter().copied())
            .map(Into::into)
            .collect();
        translate(argv).map(|v| v.into_iter().map(|a| a.into_string().unwrap()).collect())
    }

    #[test]
    fn ycsb_flags_become_scalebench_flags() {
        let got = t(&[
            "run", "-threads", "2", "-target", "100", "-s", "-t", "-P", "w",
        ])
        .unwrap();
        assert_eq!(
            got,
            [
                "scalebench",
                "run",
                "--threads",
                "2",
                "--target",
                "100",
                "-P",
                "w"
            ]
        );
        let db = t(&["load", "-load", "-db", "null://"]).unwrap();
        assert_eq!(db, ["scalebench", "load", "--db", "null://"]);
        // Values and what follows `--` are left alone.
        let kept = t(&["run", "-p", "-s", "-o", "-t", "--", "-threads"]).unwrap();
        assert_eq!(
            kept,
            [
                "scalebench",
                "run",
                "-p",
                "-s",
                "-o",
                "-t",
                "--",
                "-threads"
            ]
        );
    }

    #[test]
    fn ycsb_flags_said_differently_are_answered_in_one_line() {
        let e = t(&["run", "-db", "site.ycsb.db.JdbcDBClient"]).unwrap_err();
        assert!(
            e.contains("--db") && e.contains("site.ycsb.db.JdbcDBClient"),
            "{e}"
        );
        assert!(t(&["run", "-load"])
            .unwrap_err()
            .contains("scalebench load"));
        assert!(t(&["load", "-t"]).unwrap_err().contains("scalebench run"));
        for e in [t(&["run", "-load"]), t(&["load", "-t"]), t(&["run", "-db"])] {
            assert!(!e.unwrap_err().contains('\n'));
        }
    }
}
