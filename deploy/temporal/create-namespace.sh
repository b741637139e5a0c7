#!/bin/sh
# Registers the namespace the api and worker use (TEMPORAL_NAMESPACE) once
# the server answers; does nothing when it exists. The retention is how long
# Temporal keeps closed workflow histories (not our delivery records).
set -eu

: "${TEMPORAL_ADDRESS:?}" "${NAMESPACE:?}"
retention=${NAMESPACE_RETENTION:-72h}

tries=0
until temporal operator cluster health --address "$TEMPORAL_ADDRESS" >/dev/null 2>&1; do
  tries=$((tries + 1))
  if [ "$tries" -ge 60 ]; then
    echo "Temporal at $TEMPORAL_ADDRESS did not become healthy" >&2
    exit 1
  fi
  sleep 2
done

if temporal operator namespace describe --namespace "$NAMESPACE" --address "$TEMPORAL_ADDRESS" >/dev/null 2>&1; then
  echo "namespace $NAMESPACE exists"
else
  temporal operator namespace create --namespace "$NAMESPACE" --retention "$retention" --address "$TEMPORAL_ADDRESS"
  echo "namespace $NAMESPACE created (retention $retention)"
fi
