/*
 * The wire formats of the agent's destinations, each built from a period
 * (period.h) with the official schemas compiled by protoc-c (proto/):
 *
 *   otlp.c       OpenTelemetry profiles (v1development): one
 *                ExportProfilesServiceRequest per period, one
 *                ResourceProfiles per process with the semantic
 *                conventions' resource attributes, one shared dictionary
 *   pyroscope.c  Grafana Pyroscope: the /ingest query of one process's
 *                pprof, and the connect API's PushRequest (one series per
 *                process, its pprof as the raw profile)
 *
 * Names and labels come from the target: they were cleaned to valid UTF-8
 * without control characters (procinfo_clean, the profile's own names are
 * the reader's UTF-8), and where a format restricts characters (Pyroscope
 * label names, the /ingest name) the rest become '_'.
 */
#ifndef FRAMEWALK_AGENT_ENCODE_H
#define FRAMEWALK_AGENT_ENCODE_H

#include "agent/period.h"
#include "util/strbuf.h"

#define OTLP_PROFILES_PATH "/v1development/profiles"
#define PYROSCOPE_INGEST_PATH "/ingest"
#define PYROSCOPE_PUSH_PATH "/push.v1.PusherService/Push"

/* The batch as an OTLP ExportProfilesServiceRequest (protobuf) into out. 0 or -errno. */
int otlp_encode(const struct period_batch *b, struct strbuf *out);

/*
 * The /ingest query of process p: name=SERVICE.cpu{labels}&from=&until=
 * (Unix seconds)&format=pprof&sampleRate=&spyName=framewalk, percent-encoded.
 */
void pyroscope_ingest_query(const struct period_batch *b, const struct period_proc *p,
			    struct strbuf *out);
/* The batch as a push.v1.PushRequest (protobuf) into out. 0 or -errno. */
int pyroscope_push_encode(const struct period_batch *b, struct strbuf *out);

/* 16 random bytes (a profile id, or a UUID's). */
void encode_random_id(uint8_t out[16]);

#endif
