#!/bin/sh
# The web SSO example's start in docker-compose.yml: registers its user and client in gatehouse's
# store (the same GATEHOUSE_DATABASE_URL), then starts the example. Safe to run again: alice is
# created only when missing, and an existing client gets a new secret (printed only once, so it
# cannot be read back).
set -eu
cli="node bin/gatehouse.js"
redirect="http://127.0.0.1:${PORT:-3000}/callback"
post_logout="http://127.0.0.1:${PORT:-3000}/"

if ! $cli user show alice --json >/dev/null 2>&1; then
  printf '%s\n' "${ALICE_PASSWORD:-correct horse battery staple}" |
    $cli user create --username alice --password-stdin --email alice@example.com --given-name Alice --family-name Example --json >/dev/null
  echo "compose-start: created user alice"
fi

id=$($cli client list --json | node -e '
  let text = "";
  process.stdin.on("data", (chunk) => (text += chunk)).on("end", () => {
    const found = JSON.parse(text).find((c) => c.client_name === "Web SSO example");
    process.stdout.write(found ? found.client_id : "");
  });')
if [ -n "$id" ]; then
  client=$($cli client rotate-secret "$id" --json)
else
  client=$($cli client create --name "Web SSO example" --redirect-uri "$redirect" --post-logout-redirect-uri "$post_logout" --json)
  echo "compose-start: registered client Web SSO example"
fi
CLIENT_ID=$(node -p 'JSON.parse(process.argv[1]).client_id' "$client")
CLIENT_SECRET=$(node -p 'JSON.parse(process.argv[1]).client_secret' "$client")
export CLIENT_ID CLIENT_SECRET
exec node examples/web-sso/server.ts
