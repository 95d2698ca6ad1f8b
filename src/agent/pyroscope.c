/*
 * Grafana Pyroscope (encode.h): the query of the HTTP /ingest endpoint
 * (one request per process, its gzip'd pprof as the body) and the
 * push.v1.PushRequest of the connect API (one request per period, a
 * series per process). Label names keep [A-Za-z0-9_] (others become '_',
 * a leading digit gets a '_'); in the /ingest name, whose
 * "app{key=value,...}" syntax reserves ',', '{', '}' and '=', values keep
 * [A-Za-z0-9._/:-].
 */
#include <errno.h>
#include <inttypes.h>

#include "agent/encode.h"
#include "profile/profile.h"
#include "push.pb-c.h"
#include "util/util.h"

typedef Push__V1__PushRequest PushRequest;
typedef Push__V1__RawProfileSeries PushSeries;
typedef Push__V1__RawSample PushSample;
typedef Types__V1__LabelPair PushLabel;

static int name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

static void label_name(struct strbuf *sb, const char *s, size_t len)
{
	if (!len || (s[0] >= '0' && s[0] <= '9'))
		strbuf_addch(sb, '_');
	for (size_t i = 0; i < len; i++)
		strbuf_addch(sb, name_char(s[i]) ? s[i] : '_');
}

static void ingest_value(struct strbuf *sb, const char *s)
{
	if (!*s)
		strbuf_addch(sb, '_');
	for (; *s; s++)
		strbuf_addch(sb, name_char(*s) || strchr(".-/:", *s) ? *s : '_');
}

/* Percent-encode s (all but RFC 3986's unreserved characters). */
static void url_escape(struct strbuf *out, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";

	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (name_char((char)*p) || *p == '-' || *p == '.' || *p == '~') {
			strbuf_addch(out, (char)*p);
		} else {
			strbuf_addch(out, '%');
			strbuf_addch(out, hex[*p >> 4]);
			strbuf_addch(out, hex[*p & 15]);
		}
	}
}

/* The profile type Pyroscope names a profile of this mode. */
static const char *type_suffix(const struct period_batch *b)
{
	return profile_mode_type(b->mode);
}

void pyroscope_ingest_query(const struct period_batch *b, const struct period_proc *p,
			    struct strbuf *out)
{
	struct period_label l[PERIOD_MAX_LABELS];
	size_t n = period_labels(b, p, l, ARRAY_SIZE(l));
	struct strbuf name = STRBUF_INIT;
	int first = 1;

	/* the service is the application name; the other labels go in braces */
	ingest_value(&name, p->info.service);
	strbuf_addf(&name, ".%s{", type_suffix(b));
	for (size_t i = 0; i < n; i++) {
		if (!strcmp(l[i].key, "service_name"))
			continue;
		if (!first)
			strbuf_addch(&name, ',');
		first = 0;
		label_name(&name, l[i].key, l[i].key_len);
		strbuf_addch(&name, '=');
		ingest_value(&name, l[i].value);
	}
	strbuf_addch(&name, '}');
	strbuf_addstr(out, "name=");
	url_escape(out, strbuf_str(&name));
	strbuf_addf(out, "&from=%" PRIu64 "&until=%" PRIu64, (uint64_t)(b->from_ns / 1000000000ull),
		    (uint64_t)((b->until_ns + 999999999ull) / 1000000000ull));
	strbuf_addf(out, "&format=pprof&sampleRate=%lld&spyName=framewalk",
		    (long long)(b->rate_hz + 0.5));
	strbuf_release(&name);
}

int pyroscope_push_encode(const struct period_batch *b, struct strbuf *out)
{
	PushRequest req = PUSH__V1__PUSH_REQUEST__INIT;
	PushSeries *series = xcalloc(b->n ? b->n : 1, sizeof(*series));
	PushSeries **series_ptrs = xcalloc(b->n ? b->n : 1, sizeof(*series_ptrs));
	PushSample *samples = xcalloc(b->n ? b->n : 1, sizeof(*samples));
	PushSample **sample_ptrs = xcalloc(b->n ? b->n : 1, sizeof(*sample_ptrs));
	PushLabel *labels = xcalloc((b->n ? b->n : 1) * (PERIOD_MAX_LABELS + 1), sizeof(*labels));
	PushLabel **label_ptrs = xcalloc((b->n ? b->n : 1) * (PERIOD_MAX_LABELS + 1), sizeof(*label_ptrs));
	struct strbuf *names = xcalloc((b->n ? b->n : 1) * (PERIOD_MAX_LABELS + 1), sizeof(*names));
	char (*ids)[37] = xcalloc(b->n ? b->n : 1, sizeof(*ids));
	size_t nl = 0, len;
	uint8_t *packed;

	for (size_t i = 0; i < b->n; i++) {
		const struct period_proc *p = &b->procs[i];
		struct period_label l[PERIOD_MAX_LABELS];
		size_t n = period_labels(b, p, l, ARRAY_SIZE(l)), first = nl;
		uint8_t u[16];

		push__v1__raw_profile_series__init(&series[i]);
		push__v1__raw_sample__init(&samples[i]);
		/* __name__ first: the profile type (process_cpu: cpu and samples) */
		types__v1__label_pair__init(&labels[nl]);
		labels[nl].name = (char *)"__name__";
		labels[nl].value = (char *)(profile_mode_is_cpu(b->mode) ? "process_cpu" :
					    profile_mode_type(b->mode));
		label_ptrs[nl] = &labels[nl];
		nl++;
		for (size_t k = 0; k < n; k++) {
			types__v1__label_pair__init(&labels[nl]);
			label_name(&names[nl], l[k].key, l[k].key_len);
			labels[nl].name = names[nl].buf;
			labels[nl].value = (char *)l[k].value;
			label_ptrs[nl] = &labels[nl];
			nl++;
		}
		series[i].labels = &label_ptrs[first];
		series[i].n_labels = nl - first;
		samples[i].raw_profile.data = (uint8_t *)p->pprof.buf;
		samples[i].raw_profile.len = p->pprof.len;
		/* a version 4 UUID */
		encode_random_id(u);
		u[6] = (uint8_t)((u[6] & 0x0f) | 0x40);
		u[8] = (uint8_t)((u[8] & 0x3f) | 0x80);
		xsnprintf(ids[i], sizeof(ids[i]),
			  "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
			  u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11],
			  u[12], u[13], u[14], u[15]);
		samples[i].id = ids[i];
		sample_ptrs[i] = &samples[i];
		series[i].samples = &sample_ptrs[i];
		series[i].n_samples = 1;
		series_ptrs[i] = &series[i];
	}
	req.series = series_ptrs;
	req.n_series = b->n;
	len = push__v1__push_request__get_packed_size(&req);
	packed = xmalloc(len ? len : 1);
	push__v1__push_request__pack(&req, packed);
	strbuf_add(out, packed, len);
	free(packed);
	for (size_t i = 0; i < nl; i++)
		strbuf_release(&names[i]);
	free(names);
	free(ids);
	free(label_ptrs);
	free(labels);
	free(sample_ptrs);
	free(samples);
	free(series_ptrs);
	free(series);
	return 0;
}
