#ifndef ALGORITHMS_PS_COMPRESS_H
#define ALGORITHMS_PS_COMPRESS_H
/* ps_compress.h - Downpour's compressed pushes (downpour.compress): a client's
 * error-feedback state for each slice it pushes (one per ps_link, the slice's values as one
 * vector), the push message that carries the slice's compressed form, its wire bytes and
 * flops, and the shard's decoding. The numerics and sizes are models/compress.h's. */

#include <stddef.h>
#include <stdint.h>

#include "algorithms/ps_layout.h"
#include "algorithms/ps_msg.h"
#include "models/compress.h"

typedef struct ps_compress ps_compress;

/* The states of the client `client` whose links are lay's: with numerics, one per link that
 * holds values, a 1 x values vector, residual (and DGC's momentum) 0; QSGD draws from the
 * stream (seed, RNG_ROLE_QSGD, client), link after link. p is copied; lay outlives the
 * result. Returns NULL if p->method is COMPRESS_NONE or COMPRESS_POWERSGD, or p is out of
 * range. Free with ps_compress_free (NULL is a no-op). */
ps_compress *ps_compress_create(const compress_params *p, const ps_layout *lay, int numerics, uint64_t seed,
                                int client);
void ps_compress_free(ps_compress *c);

/* Link i's push at step: its slice of acc (the client's packed accrued gradient, lay's
 * layout; NULL without numerics) plus the slice's residual, compressed, the residual
 * keeping what is not sent (compress_encode). The message is one allocation, its
 * compressed arrays included; the receiver frees it with msg_free. */
ps_push_msg *ps_compress_push(ps_compress *c, size_t i, int client, long version, const double *acc, long step);

/* What one slice of sim_elems simulated elements carries at step, as a 1 x sim_elems vector
 * of elem_bytes values (compress_wire_bytes; no message header); 0 for an empty slice. */
double ps_compress_bytes(const compress_params *p, double sim_elems, long step, size_t elem_bytes);
/* Flops of compressing every link of c's client at step (the simulated slices'). */
double ps_compress_encode_flops(const ps_compress *c, long step);
/* Flops of a shard decoding one slice of sim_elems simulated elements pushed at step. */
double ps_compress_decode_flops(const compress_params *p, double sim_elems, long step);

/* The shard's side: out (m->n values) becomes the dense gradient m carries. */
void ps_compress_decode(const ps_push_msg *m, double *out);

#endif
