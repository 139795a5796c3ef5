//! A workload file's own statements (SQL, CQL): text with named parameters (`:user`, `:key`)
//! bound from the record's generators, as each binding family writes its placeholders.

/// What a parameter's value is: the operation's key, or a column's value for that key as the
/// load wrote it (the column's generator, the record's seed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Param {
    Key,
    Column(usize),
}

/// A statement's text cut at its parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct Template {
    /// Text and parameter occurrences, in order: `Err(i)` is parameter `i` of the operation.
    pieces: Vec<Result<String, usize>>,
}

/// The languages statements are written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Language {
    /// PostgreSQL, MySQL/MariaDB, SQLite (`sql = "..."`).
    Sql,
    /// Cassandra (`cql = "..."`).
    Cql,
}

impl Language {
    pub fn field(self) -> &'static str {
        match self {
            Language::Sql => "sql",
            Language::Cql => "cql",
        }
    }
}

/// CQL's consistency levels a statement may run at (the Cassandra binding's
/// `read_consistency` words; its test keeps the two lists equal).
pub const CQL_CONSISTENCY_LEVELS: [&str; 9] = [
    "ANY",
    "ONE",
    "TWO",
    "THREE",
    "QUORUM",
    "ALL",
    "LOCAL_QUORUM",
    "EACH_QUORUM",
    "LOCAL_ONE",
];

/// One named operation's statements, by language; `params` are bound in this order.
#[derive(Debug, Clone, PartialEq)]
pub struct Statement {
    pub name: String,
    pub sql: Option<Template>,
    pub cql: Option<Template>,
    /// The CQL statement's consistency level (one of [`CQL_CONSISTENCY_LEVELS`]).
    pub consistency: Option<String>,
    pub params: Vec<Param>,
    /// A step of a transaction (its operation's `steps`): SQL only, run between BEGIN and COMMIT.
    pub in_transaction: bool,
}

impl Statement {
    pub fn template(&self, language: Language) -> Option<&Template> {
        match language {
            Language::Sql => self.sql.as_ref(),
            Language::Cql => self.cql.as_ref(),
        }
    }

    /// Whether it only reads: each of its texts is a query (`SELECT ...`).
    pub fn only_reads(&self) -> bool {
        [&self.sql, &self.cql]
            .into_iter()
            .flatten()
            .all(Template::is_query)
    }
}

impl Template {
    /// Cuts `text` at its parameters: `:name` (a letter or `_`, then letters, digits, `_`) outside
    /// quotes ('text', "identifier") and not a PostgreSQL cast (`::`). `:key` is the key; any other
    /// name must be one of `fields`. New parameters are added to `params`.
    pub fn parse(
        text: &str,
        fields: &[String],
        params: &mut Vec<Param>,
    ) -> Result<Template, String> {
        if text.trim().is_empty() {
            return Err("is empty".into());
        }
        let mut pieces: Vec<Result<String, usize>> = Vec::new();
        let mut current = String::new();
        let mut quote: Option<char> = None;
        let mut chars = text.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            if let Some(q) = quote {
                current.push(c);
                if c == q {
                    quote = None;
                }
                continue;
            }
            match c {
                '\'' | '"' => {
                    quote = Some(c);
                    current.push(c);
                }
                ':' if chars.peek().is_some_and(|(_, n)| *n == ':') => {
                    chars.next();
                    current.push_str("::");
                }
                ':' if chars
                    .peek()
                    .is_some_and(|(_, n)| n.is_ascii_alphabetic() || *n == '_') =>
                {
                    let start = i + 1;
                    let mut end = start;
                    while let Some(&(j, n)) = chars.peek() {
                        if n.is_ascii_alphanumeric() || n == '_' {
                            end = j + n.len_utf8();
                            chars.next();
                        } else {
                            break;
                        }
                    }
                    let name = &text[start..end];
                    let param = if name == "key" {
                        Param::Key
                    } else {
                        match fields.iter().position(|f| f == name) {
                            Some(c) => Param::Column(c),
                            None => {
                                return Err(format!(
                                    "parameter ':{name}' is unbound: it names no column ({}) and is not :key",
                                    fields.join(", ")
                                ))
                            }
                        }
                    };
                    let index = match params.iter().position(|p| *p == param) {
                        Some(i) => i,
                        None => {
                            params.push(param);
                            params.len() - 1
                        }
                    };
                    pieces.push(Ok(std::mem::take(&mut current)));
                    pieces.push(Err(index));
                }
                _ => current.push(c),
            }
        }
        if let Some(q) = quote {
            return Err(format!("a quote ({q}) is not closed"));
        }
        pieces.push(Ok(current));
        pieces.retain(|p| !matches!(p, Ok(t) if t.is_empty()));
        Ok(Template { pieces })
    }

    /// Whether the statement is a query: its first word, after spaces, comments and opening
    /// parentheses, is SELECT (a data-changing statement, or a common table expression that
    /// could change data, is not).
    pub fn is_query(&self) -> bool {
        let Some(Ok(first)) = self.pieces.first() else {
            return false;
        };
        let mut rest = first.as_str();
        loop {
            let trimmed = rest.trim_start_matches(|c: char| c.is_whitespace() || c == '(');
            if let Some(comment) = trimmed.strip_prefix("--") {
                rest = comment.split_once('\n').map_or("", |(_, after)| after);
            } else if let Some(comment) = trimmed.strip_prefix("/*") {
                rest = comment.split_once("*/").map_or("", |(_, after)| after);
            } else {
                rest = trimmed;
                break;
            }
        }
        let word: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphabetic())
            .collect();
        word.eq_ignore_ascii_case("select")
    }

    /// The text with each parameter occurrence written by `placeholder(n, param_index)`, `n`
    /// counting occurrences from 1 (PostgreSQL's `$n`; `?` takes none).
    pub fn render(&self, mut placeholder: impl FnMut(usize, usize) -> String) -> String {
        let mut out = String::new();
        let mut n = 0;
        for p in &self.pieces {
            match p {
                Ok(text) => out.push_str(text),
                Err(i) => {
                    n += 1;
                    out.push_str(&placeholder(n, *i));
                }
            }
        }
        out
    }

    /// The parameter of each occurrence, in order (positional placeholders bind these).
    pub fn occurrences(&self) -> Vec<usize> {
        self.pieces
            .iter()
            .filter_map(|p| p.as_ref().err().copied())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields() -> Vec<String> {
        ["user", "token"].map(String::from).to_vec()
    }

    #[test]
    fn parameters_are_cut_out_of_the_text_but_not_out_of_quotes_or_casts() {
        let mut params = Vec::new();
        let t = Template::parse(
            r#"SELECT "token", ':user' FROM s WHERE "user" = :user AND k > :key::text OR "user" = :user"#,
            &fields(),
            &mut params,
        )
        .unwrap();
        assert_eq!(params, [Param::Column(0), Param::Key]);
        assert_eq!(t.occurrences(), [0, 1, 0]);
        assert_eq!(
            t.render(|n, _| format!("${n}")),
            r#"SELECT "token", ':user' FROM s WHERE "user" = $1 AND k > $2::text OR "user" = $3"#
        );
        // A second statement of the same operation shares its parameters.
        let cql =
            Template::parse("SELECT * FROM s WHERE k = :key", &fields(), &mut params).unwrap();
        assert_eq!(cql.occurrences(), [1]);
        assert_eq!(params.len(), 2);
    }

    #[test]
    fn an_unbound_parameter_or_an_open_quote_is_refused() {
        let mut params = Vec::new();
        let e = Template::parse("SELECT 1 WHERE a = :usr", &fields(), &mut params).unwrap_err();
        assert!(e.contains("':usr' is unbound"), "{e}");
        let e = Template::parse("SELECT 'oops", &fields(), &mut params).unwrap_err();
        assert!(e.contains("not closed"), "{e}");
        assert!(Template::parse("  ", &fields(), &mut params).is_err());
    }

    #[test]
    fn a_query_is_told_from_a_statement_that_writes() {
        let query = |text: &str| {
            Template::parse(text, &fields(), &mut Vec::new())
                .unwrap()
                .is_query()
        };
        assert!(query("SELECT token FROM s WHERE k = :key"));
        assert!(query("  -- the users\n /* sessions */ (select 1)"));
        assert!(!query("UPDATE s SET token = :token WHERE k = :key"));
        assert!(!query(
            "WITH d AS (DELETE FROM s RETURNING k) SELECT * FROM d"
        ));
        assert!(!query("INSERT INTO s SELECT * FROM t"));
        assert!(!query("selector()"));
    }
}
