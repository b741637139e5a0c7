#!/bin/sh
# Runs the official SDKs' own generated tests for workspaces, invites and
# API keys against a running `make dev`, with its real workspace id and key
# in place of the tests' fake ones (they were generated for a mock server).
#
#   harness/sdkcheck/run.sh go /path/to/openlayer-go [credentials.json]
#   harness/sdkcheck/run.sh ts /path/to/openlayer-ts [credentials.json]
#
# The SDK checkout is copied to a temporary directory, never edited. The Go
# SDK needs its module dependencies (the Go module proxy); the TypeScript
# one installs jest and swc from npm. The tests change the workspace (name
# Openlayer, slug openlayer, an invite for user@email.com, an API key);
# running them again replaces the invite.
set -eu
lang=${1:?go or ts}
sdk=${2:?path to the SDK checkout}
creds=${3:-.data/credentials.json}
ws=$(sed -n 's/.*"workspaceId": *"\([^"]*\)".*/\1/p' "$creds")
key=$(sed -n 's/.*"apiKey": *"\([^"]*\)".*/\1/p' "$creds")
base=$(sed -n 's/.*"baseUrl": *"\([^"]*\)".*/\1/p' "$creds")
fake=182bd5e5-6e1a-4fe4-a799-aa6d9a6ab26e
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -R "$sdk"/. "$tmp"
cd "$tmp"
case $lang in
go)
	files="workspace_test.go workspaceinvite_test.go workspaceapikey_test.go"
	sed -i "s/$fake/$ws/g; s/\"My API Key\"/\"$key\"/g" $files
	TEST_API_BASE_URL=$base go test -count=1 -v -run '^TestWorkspace' .
	;;
ts)
	sed -i "s/$fake/$ws/g; s/'My API Key'/'$key'/g" tests/api-resources/workspaces/*.test.ts
	echo '{"name":"sdkcheck","private":true}' >package.json
	cat >jest.config.js <<'JEST'
module.exports = {
  testEnvironment: 'node',
  transform: { '^.+\\.(t|j)sx?$': ['@swc/jest', { sourceMaps: 'inline' }] },
  moduleNameMapper: { '^openlayer$': '<rootDir>/src/index.ts', '^openlayer/(.*)$': '<rootDir>/src/$1' },
};
JEST
	rm -f jest.config.ts
	npm install --no-audit --no-fund --ignore-scripts jest@29 @swc/core@1 @swc/jest@0.2 @types/jest@29 >/dev/null
	TEST_API_BASE_URL=$base npx jest tests/api-resources/workspaces
	;;
*)
	echo "want go or ts, got $lang" >&2
	exit 2
	;;
esac
