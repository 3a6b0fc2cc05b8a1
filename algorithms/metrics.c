typedef int wip_placeholder_metrics;
