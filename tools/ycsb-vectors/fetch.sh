#!/usr/bin/env bash
# Fetch YCSB core 0.17.0 + its runtime dependencies from Maven Central into ./lib,
# and the matching sources jar into ./src (unpacked to ./src/core-0.17.0).
# Needs only: Debian with `maven` and `openjdk-17-jdk-headless` (apt-get install -y maven openjdk-17-jdk-headless).
# Optional: MAVEN_REPO_LOCAL=/some/dir to use a non-default local repository.
set -euo pipefail
cd "$(dirname "$0")"
HERE=$(pwd)
MVN=(mvn -q -B -Dstyle.color=never)
if [ -n "${MAVEN_REPO_LOCAL:-}" ]; then MVN+=("-Dmaven.repo.local=$MAVEN_REPO_LOCAL"); fi

mkdir -p fetchpom lib src
cat > fetchpom/pom.xml <<'POM'
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>local.ycsbfetch</groupId>
  <artifactId>ycsb-fetch</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency>
      <groupId>site.ycsb</groupId>
      <artifactId>core</artifactId>
      <version>0.17.0</version>
    </dependency>
  </dependencies>
</project>
POM

# core jar + transitive runtime deps:
#   core-0.17.0.jar, HdrHistogram-2.1.4.jar, htrace-core4-4.1.0-incubating.jar,
#   jackson-core-asl-1.9.4.jar, jackson-mapper-asl-1.9.4.jar
(cd fetchpom && "${MVN[@]}" dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$HERE/lib")

# sources of exactly the same release (for reading the code)
"${MVN[@]}" -f fetchpom/pom.xml dependency:copy -Dartifact=site.ycsb:core:0.17.0:jar:sources -DoutputDirectory="$HERE/src"
rm -rf src/core-0.17.0 && mkdir -p src/core-0.17.0
(cd src/core-0.17.0 && jar xf ../core-0.17.0-sources.jar)
# HdrHistogram sources (percentile/mean semantics used by the text export)
"${MVN[@]}" -f fetchpom/pom.xml dependency:copy -Dartifact=org.hdrhistogram:HdrHistogram:2.1.4:jar:sources -DoutputDirectory="$HERE/src"
rm -rf src/HdrHistogram-2.1.4 && mkdir -p src/HdrHistogram-2.1.4
(cd src/HdrHistogram-2.1.4 && jar xf ../HdrHistogram-2.1.4-sources.jar)

sha1sum lib/*.jar
# smoke test: with no arguments the client prints its usage text and exits 0
java -cp "lib/*" site.ycsb.Client 2>/dev/null | head -1
