//! A phase's offered rate, resolved once from the flags and the workload's properties: none
//! (closed loop), a constant target, or a rate profile with its mean.

use std::time::Duration;

use scalebench_workload::declared::{self, LOADRATEPROFILE, LOADTARGET, RATEPROFILE, TARGET};
use scalebench_workload::rate::{Pace, RateProfile};
use scalebench_workload::{Properties, WorkloadError};

use crate::error::SessionError;
use crate::request::check_target;

/// A phase's offered rate as resolved from the request and the workload: none (closed loop),
/// constant, or a rate profile with its mean.
#[derive(Debug, Clone, Default)]
pub struct PhasePace {
    /// Operations (records, in the load) per second: constant, or the profile's mean over the
    /// phase's window.
    pub target: Option<f64>,
    /// The whole run's profile; each client follows its share.
    pub rate_profile: Option<RateProfile>,
    /// How much later than the common start this client's arrivals begin.
    pub arrival_offset: Duration,
}

/// Where a phase's pace is declared.
pub(super) struct PaceProperties {
    pub(super) target: &'static declared::PropertyInfo,
    pub(super) rate_profile: &'static declared::PropertyInfo,
    /// The workload file's fields that set them.
    pub(super) file_target: &'static str,
    pub(super) file_rate_profile: &'static str,
}

pub(super) const RUN_PACE: PaceProperties = PaceProperties {
    target: &TARGET,
    rate_profile: &RATEPROFILE,
    file_target: "run.target",
    file_rate_profile: "run.rate_profile",
};

pub(super) const LOAD_PACE: PaceProperties = PaceProperties {
    target: &LOADTARGET,
    rate_profile: &LOADRATEPROFILE,
    file_target: "load.target",
    file_rate_profile: "load.rate_profile",
};

/// What a rate profile is laid over, for its mean.
pub(super) enum Window {
    /// The run: its duration, when it has one.
    Duration(Option<Duration>),
    /// The load: until its records are in (at most its duration, when given).
    Records(u64, Option<Duration>),
}

impl PhasePace {
    /// The request's pace, else the properties (a profile and a constant target are one or the
    /// other).
    pub(super) fn of(
        from: &PaceProperties,
        asked: &Pace,
        props: &Properties,
        window: Window,
    ) -> Result<PhasePace, SessionError> {
        let profile = match asked {
            Pace::Profile(p) => Some(p.clone()),
            Pace::Inherit => declared_rate_profile(props, from.rate_profile)?,
            Pace::Closed | Pace::Open(_) => None,
        };
        let Some(profile) = profile else {
            let target = match asked {
                Pace::Closed => 0.0,
                Pace::Open(rate) => rate.ops_s(),
                _ => props.number(from.target)?,
            };
            if let Err(expected) = check_target(target) {
                let given = props
                    .given(from.target)
                    .map_or_else(|| format!("{target:?}"), str::to_string);
                return Err(WorkloadError::invalid(from.target.name, &given, &expected).into());
            }
            return Ok(PhasePace {
                target: (target > 0.0).then_some(target),
                ..PhasePace::default()
            });
        };
        let source = if asked.profile().is_some() {
            "'--rate-profile'".to_string()
        } else {
            format!(
                "the workload's rate profile ({}, a workload file's {})",
                from.rate_profile.name, from.file_rate_profile
            )
        };
        let given =
            |e: &str| SessionError::Usage(format!("invalid value '{profile}' for {source}: {e}"));
        if props.given(from.target).is_some_and(|t| t.trim() != "0") {
            return Err(given(&format!(
                "a rate profile replaces --target (and {}, a workload file's {}): give one of them",
                from.target.name, from.file_target
            )));
        }
        let mean = match window {
            Window::Duration(Some(d)) => profile.mean_over(d),
            Window::Duration(None) => {
                return Err(given(
                    "a rate profile is laid over the run's window: give --duration (not only an operation count)",
                ))
            }
            // The load lasts until its records are in: the profile's mean over that time.
            Window::Records(records, cap) => {
                let cap_s = cap.map(|d| d.as_secs_f64());
                let end = match (profile.time_of(records as f64, 0.0), cap_s) {
                    (Some(t), Some(c)) => t.min(c),
                    (Some(t), None) => t,
                    (None, Some(c)) => c,
                    (None, None) => {
                        return Err(given(&format!(
                            "the profile falls to 0 records/s before the load's {records} records are in: give the load a --duration"
                        )))
                    }
                };
                if end > 0.0 {
                    profile.arrivals_by(end) / end
                } else {
                    profile.rate_at(0.0)
                }
            }
        };
        Ok(PhasePace {
            target: Some(mean),
            rate_profile: Some(profile),
            arrival_offset: Duration::ZERO,
        })
    }

    /// Client `share`'s part: T / N, its arrivals between the other clients'.
    pub(super) fn for_client(self, share: &crate::clients::ClientShare) -> PhasePace {
        match self.target {
            Some(t) => PhasePace {
                target: Some(share.rate(t)),
                arrival_offset: share.arrival_offset(t),
                ..self
            },
            None => self,
        }
    }
}

/// A declared rate profile property (`rateprofile`, `loadrateprofile`), checked.
pub(super) fn declared_rate_profile(
    props: &Properties,
    property: &declared::PropertyInfo,
) -> Result<Option<RateProfile>, SessionError> {
    let Some(text) = props.given(property) else {
        return Ok(None);
    };
    RateProfile::parse(text)
        .map(Some)
        .map_err(|e| WorkloadError::invalid(property.name, text, e).into())
}
