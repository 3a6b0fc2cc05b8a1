typedef int wip_placeholder_downpour;
