typedef int wip_placeholder_cost;
