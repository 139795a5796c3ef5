//! How the studies' commands end: the lines said after their output and the exit code (0
//! success, 3 a client missing, 4 a service level not met, 130 interrupted), in one place.

use scalebench_distributed::EXIT_INCOMPLETE;
use scalebench_elastic::result::ElasticResult;
use scalebench_session::ending::Ending;

use crate::saturate::{Followed, Search, SearchEnd};

/// Every operation completed, but an event broke a threshold of `--sla`.
pub const EXIT_SERVICE_LEVEL_MISSED: u8 = 4;

/// `scalebench elastic`: interrupted, a client lost, a service level missed, or done.
pub fn of_elastic(out: &ElasticResult) -> Ending {
    let mut lines: Vec<String> = out
        .incomplete
        .iter()
        .map(|why| format!("incomplete: {why}"))
        .collect();
    let code = if out.interrupted {
        130
    } else if out.incomplete.is_some() {
        EXIT_INCOMPLETE
    } else if out.service_level_met == Some(false) {
        lines.push(format!(
            "service level not met ({}): exit code 4",
            out.service_level.as_deref().unwrap_or("--sla")
        ));
        EXIT_SERVICE_LEVEL_MISSED
    } else {
        0
    };
    Ending { code, lines }
}

/// A client other than 0 of a rendezvous search: what it ran and how client 0 ended it.
pub fn of_follower(followed: &Followed) -> Ending {
    Ending {
        code: if followed.interrupted {
            130
        } else if followed.incomplete {
            EXIT_INCOMPLETE
        } else {
            0
        },
        lines: vec![format!(
            "this client ran {} run(s) of the search; client 0 ended it: {}",
            followed.runs, followed.ended_by
        )],
    }
}

/// A saturation search: a client lost, interrupted, or ended by its rule.
pub fn of_search(found: &Search) -> Ending {
    Ending {
        code: match found.answer.ended_by {
            SearchEnd::Incomplete => EXIT_INCOMPLETE,
            SearchEnd::Interrupted => 130,
            _ => 0,
        },
        lines: Vec::new(),
    }
}
