#ifndef ALGORITHMS_PS_H
#define ALGORITHMS_PS_H
/* ps.h - a parameter-server shard (Dean et al. 2012, section 4.1): it owns one
 * contiguous slice of the parameters, answers fetches with a copy of its slice,
 * and applies each pushed gradient as it arrives, with fixed-rate SGD or Adagrad
 * kept on the shard. Downpour's; Sandblaster's shards (sandblaster.c) hold L-BFGS's slot
 * vectors and run commands on them instead. */

#include <gsl/gsl_vector.h>
#include <simgrid/forward.h>

#include "algorithms/eval.h"
#include "algorithms/metrics.h"
#include "algorithms/ps_layout.h"
#include "algorithms/ps_msg.h"
#include "algorithms/run.h"
#include "models/compress.h"

typedef struct ps_shard ps_shard;

/* Shard `rank` of n_shards over the global parameter vector w (NULL when numerics
 * are off): it holds ps_slice's slice of w, a view, never a copy, and of the
 * cfg->sim_params simulated parameters. Client c listens on mailbox "<client_role>-<c>"
 * on host client_hosts[c] (the array outlives the shard). The shard exits once every
 * client it serves has sent PS_MSG_DONE (ps_msg.h), then calls eval_finished. slot
 * receives its staleness counts. Never NULL. */
ps_shard *ps_create(const run_config *cfg, gsl_vector *w, int rank, int n_shards, ps_rule rule,
                    const char *client_role, const sg_host_t *client_hosts, int n_clients,
                    metrics_slot *slot, eval_ctl *eval);
void ps_free(ps_shard *s);

/* Creates the shard's actor on host; it listens on mailbox "ps-<rank>". */
void ps_start(ps_shard *s, sg_host_t host);

/* Restricts what client c fetches and pushes to k, its layout's link to this shard
 * (ps_layout.h; its ranges inside the numeric slice, ignored when numerics are off,
 * else an abort): a fetch is answered with those values, a push carries them in the
 * same order, and both are sized by k->sim_elems. k NULL, or with no range and no
 * simulated element: c never talks to this shard (nor says it is done). Without a
 * call, c gets the whole slice. Call before the run; the ranges are copied. */
void ps_serve_link(ps_shard *s, int c, const ps_link *k);

/* downpour.comm_quantum = q > 0 (courier.h): the shard's replies start only at multiples of
 * q, from a courier beside the shard, so that the shard goes on serving its queue meanwhile.
 * Not under [faults]. Call before ps_start. */
void ps_send_on_quantum(ps_shard *s, double q);

/* downpour.compress (p->method not COMPRESS_NONE): pushes arrive compressed as p says
 * (ps_compress.h); the shard decodes each into a dense gradient, executing the decoding's
 * flops on its host, and applies that as it would a dense push. Call before the run. */
void ps_decode_pushes(ps_shard *s, const compress_params *p);

/* For a bank (ps_bank.h), which serves the shard's clients in its place: */
/* The reply to client's fetch `serial`: a copy of its values and the version they are at,
 * and in *bytes its simulated size. Never NULL; the receiver frees it. */
ps_params_msg *ps_reply(ps_shard *s, int client, long serial, double *bytes);
/* Records a push's staleness: updates applied since its parameters were fetched. */
void ps_record_staleness(ps_shard *s, const ps_push_msg *push);
/* The flops of applying one push of client's to the slice (models/cost.h). */
double ps_update_flops(const ps_shard *s, int client);
/* Applies a dense push (g its gradient, NULL: push->grad) to the slice, without simulated
 * time; the version counts it. */
void ps_apply(ps_shard *s, const ps_push_msg *push, const double *g);
/* A bank's shard ended: the evaluator counts it (eval_finished). */
void ps_bank_ended(ps_shard *s);
/* Whether client c talks to the shard (ps_serve_link): 1 unless told it never does. */
int ps_serves(const ps_shard *s, int c);

/* Copies the shard's current slice into the same positions of w (evaluator only;
 * takes the shard's lock so that it never sees half an update). */
void ps_snapshot(ps_shard *s, gsl_vector *w);

/* [faults] (cfg->faults set): the shard then receives with bounded waits, counts client c
 * as finished once gone(ctx, c) returns 1 (it finished or died) instead of waiting for
 * its PS_MSG_DONE, and checkpoints every faults.checkpoint_interval. Call before the run. */
void ps_watch(ps_shard *s, int (*gone)(void *ctx, int client), void *ctx);
/* The mailbox of the shard's current incarnation, or NULL while its host is down
 * (between ps_fail and ps_restart) or after it ended. */
sg_mailbox_t ps_mailbox(ps_shard *s);
/* Its host died (injector hook): the slice, Adagrad sums and version roll back to the
 * last checkpoint and the updates applied since count as lost. A shard whose host
 * never comes back ends (for the evaluator) here. */
void ps_fail(ps_shard *s, sg_host_t host);
/* Its host is back (injector hook): a new shard actor starts from the checkpoint, on a
 * fresh mailbox (messages the dead one had accepted are lost with it). No-op unless
 * ps_fail came first. */
void ps_restart(ps_shard *s, sg_host_t host);

#endif
