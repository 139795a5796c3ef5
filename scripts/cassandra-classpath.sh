#!/usr/bin/env bash
# Prints the path of a file holding Apache Cassandra 5.0's classpath (cassandra-all and its dependencies
# from Maven Central), resolving it with Maven on first use. Needs maven and a JDK 17.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
out=${CASSANDRA_CLASSPATH_FILE:-$here/target/cassandra/classpath.txt}
if [ ! -s "$out" ]; then
  mkdir -p "$(dirname "$out")"
  mvn -q -B -f "$here/deployments/cassandra/pom.xml" dependency:build-classpath \
      -Dmdep.outputFile="$out.tmp" -Dmdep.includeScope=runtime >&2
  mv "$out.tmp" "$out"
fi
echo "$out"
