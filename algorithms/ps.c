typedef int wip_placeholder_ps;
