/* tune_json.c -- marlin-tune --show FILE --json: the cache file as one JSON object (the fields
 * are listed in marlin_tune.h), for scripts that would otherwise parse the table. */
#include <limits.h>
#include <stdio.h>

#include "marlin_tune.h"

/* A JSON string. The parser admits only names and printable header text, but a path may hold
 * anything: quotes, backslashes and control bytes are escaped; other bytes pass as they are
 * (a path that is not UTF-8 stays not UTF-8). */
static void json_string(FILE *out, const char *s) {
  fputc('"', out);
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '"' || *p == '\\') fprintf(out, "\\%c", *p);
    else if (*p < 0x20 || *p == 0x7f) fprintf(out, "\\u%04x", *p);
    else fputc(*p, out);
  }
  fputc('"', out);
}

void marlin_tune_json(FILE *out, const char *path, const mgen__cache_header *h,
                      const mgen__cache_record *records, size_t count, int this_build_table) {
  fputs("{\n  \"file\": ", out);
  json_string(out, path);
  fprintf(out, ",\n  \"format\": %d,\n  \"library\": ", h->format);
  json_string(out, h->library);
  fprintf(out, ",\n  \"table\": \"0x%016llx\",\n  \"this_build_table\": %s,\n  \"device\": ",
          (unsigned long long)h->table_hash, this_build_table ? "true" : "false");
  json_string(out, h->device);
  fprintf(out, ",\n  \"sms\": %d,\n  \"sm\": %d,\n  \"cuda_runtime\": %d,\n  \"cuda_driver\": %d,"
          "\n  \"records\": [", h->sms, h->sm, h->cuda_runtime, h->cuda_driver);
  for (size_t i = 0; i < count; i++) {
    const mgen__cache_record *r = &records[i];
    char key[48], m_hi[16] = "null", speedup[32] = "null";
    mgen__cache_key_text(&r->key, key, sizeof key);
    if (r->m_hi != INT_MAX) snprintf(m_hi, sizeof m_hi, "%d", r->m_hi);
    if (r->ns > 0 && r->default_ns > 0)
      snprintf(speedup, sizeof speedup, "%.4f", (double)r->default_ns / (double)r->ns);
    fprintf(out, "%s\n    {\"key\": \"%s\", \"n\": %d, \"k\": %d, \"m_lo\": %d, \"m_hi\": %s, "
            "\"kernel\": ", i ? "," : "", key, r->n, r->k, r->m_lo, m_hi);
    json_string(out, r->kernel);
    fprintf(out, ", \"family\": \"%s\", \"ns\": %llu, \"default_kernel\": ",
            marlin_tune_family(r->kernel), (unsigned long long)r->ns);
    json_string(out, r->default_kernel);
    fprintf(out, ", \"default_ns\": %llu, \"speedup\": %s}", (unsigned long long)r->default_ns,
            speedup);
  }
  fputs(count ? "\n  ]\n}\n" : "]\n}\n", out);
}
