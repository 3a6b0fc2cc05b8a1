typedef int wip_placeholder_scenario;
