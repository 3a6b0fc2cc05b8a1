typedef int wip_placeholder_rng;
