//! A column's generator as a file writes it: `generator.NAME = { fields }`, or `generator =
//! "NAME"` for one without fields. Each family module declares its own generators (a serde enum
//! of them, their names and their checks), so a new generator of a family is written in that
//! family's module alone; this one reads a generator by asking each family whether the name is
//! one of its own, and lists every family's generators in the JSON Schema as one choice. The
//! serde form is the families' own (externally tagged), so the file format, the `columns`
//! property's JSON and their errors are what one enum of every generator gave.

use std::cell::Cell;
use std::fmt;
use std::sync::LazyLock;

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::de::value::{MapDeserializer, StrDeserializer};
use serde::de::{
    self, DeserializeSeed, Deserializer, EnumAccess, IntoDeserializer, MapAccess, Unexpected,
    VariantAccess, Visitor,
};
use serde::{Deserialize, Serialize};

use super::bytes::decl::{self as bytes, BytesGenerator};
use super::derived::decl::{self as derived, DerivedGenerator};
use super::keyed::decl::{self as keyed, KeyedGenerator};
use super::literal::decl::{self as literal, LiteralGenerator};
use super::numbers::decl::{self as numbers, NumberGenerator};
use super::text::decl::{self as text, TextGenerator};
use super::time::decl::{self as time, TimeGenerator};

/// How a column's values are made. Integer and double columns take the numeric generators (an
/// integer column's values rounded), text the text generators, each type its own.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Generator {
    Literal(LiteralGenerator),
    Keyed(KeyedGenerator),
    Number(NumberGenerator),
    Time(TimeGenerator),
    Text(TextGenerator),
    Bytes(BytesGenerator),
    Derived(DerivedGenerator),
}

/// Every generator's name, family by family (what an unknown name's error lists).
static NAMES: LazyLock<Vec<&'static str>> = LazyLock::new(|| {
    [
        literal::NAMES,
        keyed::NAMES,
        numbers::NAMES,
        time::NAMES,
        text::NAMES,
        bytes::NAMES,
        derived::NAMES,
    ]
    .concat()
});

impl Generator {
    /// The generator's name, as the file writes it.
    pub fn name(&self) -> &'static str {
        match self {
            Generator::Literal(g) => g.name(),
            Generator::Keyed(g) => g.name(),
            Generator::Number(g) => g.name(),
            Generator::Time(g) => g.name(),
            Generator::Text(g) => g.name(),
            Generator::Bytes(g) => g.name(),
            Generator::Derived(g) => g.name(),
        }
    }

    /// The generator `name` reads as, its fields (if any) the next value of `fields`: the first
    /// family that has a generator of that name; `None` when none has.
    fn read<'de, A: MapAccess<'de>>(
        name: &str,
        mut fields: Option<&mut A>,
    ) -> Result<Option<Generator>, A::Error> {
        let f = &mut fields;
        if let Some(g) = of_family(name, f.as_deref_mut())? {
            return Ok(Some(Generator::Literal(g)));
        }
        if let Some(g) = of_family(name, f.as_deref_mut())? {
            return Ok(Some(Generator::Keyed(g)));
        }
        if let Some(g) = of_family(name, f.as_deref_mut())? {
            return Ok(Some(Generator::Number(g)));
        }
        if let Some(g) = of_family(name, f.as_deref_mut())? {
            return Ok(Some(Generator::Time(g)));
        }
        if let Some(g) = of_family(name, f.as_deref_mut())? {
            return Ok(Some(Generator::Text(g)));
        }
        if let Some(g) = of_family(name, f.as_deref_mut())? {
            return Ok(Some(Generator::Bytes(g)));
        }
        if let Some(g) = of_family(name, f.as_deref_mut())? {
            return Ok(Some(Generator::Derived(g)));
        }
        Ok(None)
    }
}

/// Generator `name` of family `F`, or `None` when `F` has no generator of that name (its fields,
/// then, are left unread for the next family).
fn of_family<'de, F: Deserialize<'de>, A: MapAccess<'de>>(
    name: &str,
    fields: Option<&mut A>,
) -> Result<Option<F>, A::Error> {
    let unknown = Cell::new(false);
    let chosen = Chosen {
        name,
        fields,
        unknown: &unknown,
    };
    match F::deserialize(chosen) {
        Ok(g) => Ok(Some(g)),
        Err(_) if unknown.get() => Ok(None),
        Err(e) => Err(e),
    }
}

impl<'de> Deserialize<'de> for Generator {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(GeneratorVisitor)
    }
}

struct GeneratorVisitor;

impl<'de> Visitor<'de> for GeneratorVisitor {
    type Value = Generator;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a generator: { NAME = { ... } }, or the name of one without fields")
    }

    fn visit_str<E: de::Error>(self, name: &str) -> Result<Generator, E> {
        // A name alone: no fields to read.
        type NoFields<'de, E> = MapDeserializer<'de, std::iter::Empty<((), ())>, E>;
        Generator::read::<NoFields<'de, E>>(name, None)?
            .ok_or_else(|| de::Error::unknown_variant(name, &NAMES))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Generator, A::Error> {
        let Some(name) = map.next_key::<String>()? else {
            return Err(de::Error::invalid_length(0, &"one generator"));
        };
        let g = Generator::read(&name, Some(&mut map))?
            .ok_or_else(|| de::Error::unknown_variant(&name, &NAMES))?;
        match map.next_key::<String>()? {
            Some(other) => Err(de::Error::custom(format!(
                "one generator per column, not {name} and {other}"
            ))),
            None => Ok(g),
        }
    }
}

/// A family's enum read as the generator `name` with its fields: the enum's variant is `name`,
/// its content the map's next value (or nothing, for a name alone). `unknown` says whether the
/// family refused the name itself.
struct Chosen<'n, 'a, A> {
    name: &'n str,
    fields: Option<&'a mut A>,
    unknown: &'a Cell<bool>,
}

impl<'de, A: MapAccess<'de>> Deserializer<'de> for Chosen<'_, '_, A> {
    type Error = A::Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, A::Error> {
        visitor.visit_enum(self)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map struct enum
        identifier ignored_any
    }
}

impl<'de, A: MapAccess<'de>> EnumAccess<'de> for Chosen<'_, '_, A> {
    type Error = A::Error;
    type Variant = Self;

    fn variant_seed<S: DeserializeSeed<'de>>(self, seed: S) -> Result<(S::Value, Self), A::Error> {
        let name: StrDeserializer<A::Error> = self.name.into_deserializer();
        match seed.deserialize(name) {
            Ok(v) => Ok((v, self)),
            Err(e) => {
                self.unknown.set(true);
                Err(e)
            }
        }
    }
}

impl<'de, A: MapAccess<'de>> VariantAccess<'de> for Chosen<'_, '_, A> {
    type Error = A::Error;

    fn unit_variant(self) -> Result<(), A::Error> {
        match self.fields {
            None => Ok(()),
            Some(map) => map.next_value::<NoContent>().map(|_| ()),
        }
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, A::Error> {
        match self.fields {
            Some(map) => map.next_value_seed(seed),
            None => Err(de::Error::invalid_type(
                Unexpected::UnitVariant,
                &"newtype variant",
            )),
        }
    }

    fn tuple_variant<V: Visitor<'de>>(self, _: usize, _: V) -> Result<V::Value, A::Error> {
        // No generator is a tuple.
        Err(de::Error::invalid_type(
            Unexpected::TupleVariant,
            &"a generator",
        ))
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, A::Error> {
        match self.fields {
            Some(map) => map.next_value_seed(StructContent { fields, visitor }),
            None => Err(de::Error::invalid_type(
                Unexpected::UnitVariant,
                &"struct variant",
            )),
        }
    }
}

/// A struct variant's content: the fields' table.
struct StructContent<V> {
    fields: &'static [&'static str],
    visitor: V,
}

impl<'de, V: Visitor<'de>> DeserializeSeed<'de> for StructContent<V> {
    type Value = V::Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<V::Value, D::Error> {
        d.deserialize_struct("Generator", self.fields, self.visitor)
    }
}

/// What a generator without fields may be given as its content: nothing (JSON's null) or an
/// empty table.
struct NoContent;

impl<'de> Deserialize<'de> for NoContent {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Empty;
        impl<'de> Visitor<'de> for Empty {
            type Value = NoContent;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("no fields")
            }
            fn visit_unit<E: de::Error>(self) -> Result<NoContent, E> {
                Ok(NoContent)
            }
            fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<NoContent, M::Error> {
                match map.next_key::<String>()? {
                    None => Ok(NoContent),
                    Some(k) => Err(de::Error::unknown_field(&k, &[])),
                }
            }
        }
        d.deserialize_any(Empty)
    }
}

impl JsonSchema for Generator {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Generator".into()
    }

    /// One choice of every family's generators.
    fn json_schema(g: &mut SchemaGenerator) -> Schema {
        let families = [
            LiteralGenerator::json_schema(g),
            KeyedGenerator::json_schema(g),
            NumberGenerator::json_schema(g),
            TimeGenerator::json_schema(g),
            TextGenerator::json_schema(g),
            BytesGenerator::json_schema(g),
            DerivedGenerator::json_schema(g),
        ];
        let mut choices = Vec::new();
        for family in families {
            match family.get("oneOf").and_then(|c| c.as_array()) {
                Some(c) => choices.extend(c.iter().cloned()),
                None => choices.push(family.to_value()),
            }
        }
        json_schema!({
            "description": "How a column's values are made. Integer and double columns take the \
                            numeric generators (an\ninteger column's values rounded), text the text \
                            generators, each type its own.",
            "oneOf": choices,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every name a family lists reads as that family's generator, and the schema offers as many
    /// generators as the families list: a generator missing from its family's `NAMES` (the
    /// list an unknown name's error gives) fails here.
    #[test]
    fn the_names_are_the_families_generators() {
        for name in NAMES.iter() {
            let e = serde_json::from_str::<Generator>(&format!("{{\"{name}\": {{}}}}"))
                .err()
                .map(|e| e.to_string());
            assert!(
                !e.as_deref().unwrap_or("").contains("unknown variant"),
                "{name}: {e:?}"
            );
        }
        let schema = schemars::schema_for!(Generator);
        let choices = schema.get("oneOf").and_then(|c| c.as_array()).unwrap();
        assert_eq!(choices.len(), NAMES.len());
        let e = serde_json::from_str::<Generator>("{\"gaussian\": {\"mean\": 1}}").unwrap_err();
        assert!(
            e.to_string()
                .contains("unknown variant `gaussian`, expected one of `constant`"),
            "{e}"
        );
    }

    /// The serde form is the one enum of every generator's: externally tagged, a generator
    /// without fields as its name; TOML and JSON alike; a field error names the field.
    #[test]
    fn a_generator_reads_and_writes_as_before() {
        for json in [
            r#"{"uniform":{"min":1.0,"max":10.0}}"#,
            r#""uuid""#,
            r#""ycsb_text""#,
            r#"{"text":{"min_length":5,"max_length":null,"charset":"alphanumeric"}}"#,
            r#"{"derived":{"template":"{key}"}}"#,
        ] {
            let g: Generator = serde_json::from_str(json).unwrap();
            assert_eq!(serde_json::to_string(&g).unwrap(), json);
        }
        #[derive(Deserialize, Debug)]
        struct Column {
            #[allow(dead_code)]
            generator: Generator,
        }
        let toml = |t: &str| toml::from_str::<Column>(t).map_err(|e| e.message().to_string());
        assert!(toml("generator.zipfian = { min = 1, max = 10 }").is_ok());
        assert!(toml("generator = \"uuid\"").is_ok());
        assert!(toml("[generator.words]\nwords = [\"a\"]\n").is_ok());
        let e = toml("generator.uniform = { min = 1, max = 2, colour = 3 }").unwrap_err();
        assert!(e.contains("unknown field `colour`"), "{e}");
        let e = toml("generator.uniform = { min = 1 }").unwrap_err();
        assert!(e.contains("missing field `max`"), "{e}");
        let e = toml("generator = \"uniform\"").unwrap_err();
        assert!(e.contains("invalid type"), "{e}");
        assert!(toml("generator = { uuid = 4 }").is_err());
    }
}
