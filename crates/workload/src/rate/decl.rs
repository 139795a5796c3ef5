//! A rate profile as a workload file declares it: its text form, or an array of stages, each a
//! segment's text or k6's `{ duration, target }` (a linear ramp from the rate reached before, 0
//! at first, to `target` over `duration`).

use std::fmt;

use serde::de::{self, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};

use schemars::{json_schema, Schema, SchemaGenerator};

use super::{segment, segment::duration_text, RateProfile, Segment, SEGMENT_SEPARATOR};
use crate::duration::DurationText;

/// `rate_profile = "ramp:...; constant:..."` or `rate_profile = [ ... ]`.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum RateProfileDecl {
    /// The `--rate-profile` form: segments separated by `;`.
    Text(#[schemars(schema_with = "profile_text_schema")] String),
    /// One stage after another.
    Stages(Vec<StageDecl>),
}

/// A stage: a segment's text (`"hold:rate=1000,for=1m"`), or k6's `{ duration, target }`.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum StageDecl {
    Segment(#[schemars(schema_with = "segment_text_schema")] String),
    /// From the rate the stages before reached (0 at first) to `target` linearly over
    /// `duration` (30s, 1m30s), as k6's `stages`.
    Target {
        duration: DurationText,
        target: f64,
    },
}

/// A segment's text as a pattern: its kind, `:`, then its fields (`NAME=VALUE`, separated by
/// `,`; which fields each kind takes is the checker's).
fn segment_pattern() -> String {
    format!(r"\s*(?:{}):[^;]*", segment::KIND_NAMES.join("|"))
}

/// The schema of a profile's text: segments separated by `;` (its description is the variant's).
fn profile_text_schema(_: &mut SchemaGenerator) -> Schema {
    let one = segment_pattern();
    json_schema!({
        "type": "string",
        "pattern": format!("^{one}(?:;{one})*$"),
        "examples": ["ramp:from=0,to=1000,over=30s; hold:rate=1000,for=1m"],
    })
}

/// The schema of one stage's segment text.
fn segment_text_schema(_: &mut SchemaGenerator) -> Schema {
    json_schema!({
        "description": "One segment: KIND:NAME=VALUE,... (no `;`).",
        "type": "string",
        "pattern": format!("^{}$", segment_pattern()),
        "examples": ["hold:rate=1000,for=1m"],
    })
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
                let d = duration.value();
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
                // A stage that does not read is named by its place, as one that is not a segment.
                let stage = |n: usize, e: A::Error| de::Error::custom(format!("stage {n}: {e}"));
                while let Some(s) = seq
                    .next_element::<StageDecl>()
                    .map_err(|e| stage(stages.len() + 1, e))?
                {
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
                        "duration" => {
                            let text = map.next_value::<String>()?;
                            let d = DurationText::parse(&text).map_err(|_| {
                                de::Error::custom(format!(
                                    "duration = {text:?}: expected a duration such as 30s, 1m30s or 500ms"
                                ))
                            })?;
                            duration = Some(d);
                        }
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
