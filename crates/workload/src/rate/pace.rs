//! How a load or a run is asked to pace its operations (issue 64): one value whichever way it
//! arrives (`--target`, `--rate-profile`, an experiment's options or sweep, `saturate`'s steps),
//! so that "closed loop" is a case of its own rather than a target of 0, and a constant target
//! and a profile cannot both be given.

use serde::{Deserialize, Serialize};

use super::{Rate, RateProfile};

/// What a request says of its phase's offered rate.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Pace {
    /// The workload's own (`target`, `rateprofile`, a workload file's `run.target`, ...), else a
    /// closed loop.
    #[default]
    Inherit,
    /// A closed loop whatever the workload says (`--target 0`): each slot starts its next
    /// operation when the last one ends.
    Closed,
    /// An open loop at a constant rate, all threads and clients together.
    Open(Rate),
    /// An open loop whose rate changes over the window.
    Profile(RateProfile),
}

impl Pace {
    /// A target as YCSB's `-target` takes it: 0 is a closed loop, else a rate within the bounds.
    pub fn of_target(ops_s: f64) -> Result<Pace, String> {
        Ok(Rate::or_zero(ops_s)?.map_or(Pace::Closed, Pace::Open))
    }

    /// `--target`'s parser.
    pub fn parse_target(text: &str) -> Result<Pace, String> {
        let ops_s = text
            .parse::<f64>()
            .map_err(|_| "expected a number of operations per second".to_string())?;
        Pace::of_target(ops_s)
    }

    /// The constant rate asked for, if any.
    pub fn rate(&self) -> Option<Rate> {
        match self {
            Pace::Open(r) => Some(*r),
            _ => None,
        }
    }

    /// The profile asked for, if any.
    pub fn profile(&self) -> Option<&RateProfile> {
        match self {
            Pace::Profile(p) => Some(p),
            _ => None,
        }
    }
}

/// As a number: a request carries its rate to a distributed run's clients; a number out of the
/// bounds is refused in their words.
impl Serialize for Rate {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(self.ops_s())
    }
}

impl<'de> Deserialize<'de> for Rate {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Rate::new(f64::deserialize(d)?).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::{Pace, Rate, RateProfile};

    /// A target of 0 is a closed loop, a rate is kept, anything else is refused in the bounds'
    /// words; each case goes to a client process and back unchanged.
    #[test]
    fn a_pace_is_one_of_four_and_travels_unchanged() {
        assert_eq!(Pace::parse_target("0"), Ok(Pace::Closed));
        assert_eq!(
            Pace::parse_target("250").unwrap().rate(),
            Some(Rate::new(250.0).unwrap())
        );
        assert_eq!(
            Pace::parse_target("-1").unwrap_err(),
            "expected 0 or a rate from 0.001 to 1e9 ops/s"
        );
        assert!(Pace::parse_target("fast").is_err());
        let profile = RateProfile::parse("ramp:from=10,to=100,over=5s").unwrap();
        for pace in [
            Pace::Inherit,
            Pace::Closed,
            Pace::of_target(1e9).unwrap(),
            Pace::Profile(profile.clone()),
        ] {
            let text = serde_json::to_string(&pace).unwrap();
            assert_eq!(serde_json::from_str::<Pace>(&text).unwrap(), pace, "{text}");
        }
        assert_eq!(Pace::Profile(profile.clone()).profile(), Some(&profile));
        let too_fast = serde_json::from_str::<Pace>(r#"{"open":2e9}"#).unwrap_err();
        assert!(
            too_fast.to_string().contains("a rate from 0.001"),
            "{too_fast}"
        );
    }
}
