//! A rate profile as a workload file declares it: its text form, or an array of stages, each a
//! segment's text or k6's `{ duration, target }` (a linear ramp from the rate reached before, 0
//! at first, to `target` over `duration`).

use std::fmt;

use serde::de::{self, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};

use super::{segment::duration_text, RateProfile, Segment, SEGMENT_SEPARATOR};

/// `rate_profile = "ramp:...; constant:..."` or `rate_profile = [ ... ]`.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum RateProfileDecl {
    /// The `--rate-profile` form: segments separated by `;`.
    Text(String),
    /// One stage after another.
    Stages(Vec<StageDecl>),
}

/// A stage: a segment's text (`"hold:rate=1000,for=1m"`), or k6's `{ duration, target }`.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum StageDecl {
    Segment(String),
    /// From the rate the stages before reached (0 at first) to `target` linearly over
    /// `duration` (30s, 1m30s), as k6's `stages`.
    Target {
        duration: String,
        target: f64,
    },
}

impl RateProfileDecl {
    /// The profile, in the text form `--rate-profile` takes (the `rateprofile` property), checked:
    /// the text as written, or the stages' segments. An error names the stage it is about.
    pub fn text(&self) -> Result<String, String> {
        let stages = match self {
            RateProfileDecl::Text(t) => return RateProfile::parse(t).map(|_| t.clone()),
            RateProfileDecl::Stages(s) => s,
        };
        let mut segments = Vec::with_capacity(stages.len());
        let mut reached = 0.0;
        for (i, stage) in stages.iter().enumerate() {
            let segment = stage
                .segment(reached)
                .map_err(|e| format!("stage {}: {e}", i + 1))?;
            reached = segment.rate_at(segment.length_s().unwrap_or(0.0));
            segments.push(segment);
        }
        RateProfile::of(segments).map(|p| p.to_string())
    }
}

impl StageDecl {
    /// The segment this stage is when the stages before it reached `reached` ops/s.
    fn segment(&self, reached: f64) -> Result<Segment, String> {
        match self {
            StageDecl::Segment(text) => {
                if text.contains(SEGMENT_SEPARATOR) {
                    return Err(format!("'{text}': one segment per stage (no ';')"));
                }
                Segment::parse(text).map_err(|e| format!("'{text}': {e}"))
            }
            StageDecl::Target { duration, target } => {
                let d = humantime::parse_duration(duration).map_err(|_| {
                    format!(
                        "duration = {duration:?}: expected a duration such as 30s, 1m30s or 500ms"
                    )
                })?;
                let segment = if *target == reached {
                    Segment::Constant {
                        rate: *target,
                        hold: Some(d),
                    }
                } else {
                    Segment::Ramp {
                        from: reached,
                        to: *target,
                        over: d,
                    }
                };
                segment.check().map_err(|e| {
                    format!(
                        "{{ duration = {:?}, target = {target} }} ({segment}): {e}",
                        duration_text(d)
                    )
                })?;
                Ok(segment)
            }
        }
    }
}

// Read by hand, not `untagged`: a mistake is named (an unknown key, a missing one), not "data
// did not match any variant".
impl<'de> Deserialize<'de> for RateProfileDecl {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Decl;
        impl<'de> Visitor<'de> for Decl {
            type Value = RateProfileDecl;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a profile's text (\"ramp:from=0,to=1000,over=30s; hold:rate=1000,for=1m\") or an array of stages")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(RateProfileDecl::Text(v.to_string()))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut stages = Vec::new();
                while let Some(s) = seq.next_element::<StageDecl>()? {
                    stages.push(s);
                }
                Ok(RateProfileDecl::Stages(stages))
            }
        }
        d.deserialize_any(Decl)
    }
}

impl<'de> Deserialize<'de> for StageDecl {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Stage;
        impl<'de> Visitor<'de> for Stage {
            type Value = StageDecl;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a segment's text (\"hold:rate=1000,for=1m\") or { duration = \"30s\", target = 1000 }")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(StageDecl::Segment(v.to_string()))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let (mut duration, mut target) = (None, None);
                while let Some(key) = map.next_key::<String>()? {
                    match key.as_str() {
                        "duration" => duration = Some(map.next_value::<String>()?),
                        "target" => target = Some(map.next_value::<f64>()?),
                        other => {
                            return Err(de::Error::unknown_field(other, &["duration", "target"]))
                        }
                    }
                }
                Ok(StageDecl::Target {
                    duration: duration.ok_or_else(|| de::Error::missing_field("duration"))?,
                    target: target.ok_or_else(|| de::Error::missing_field("target"))?,
                })
            }
        }
        d.deserialize_any(Stage)
    }
}
