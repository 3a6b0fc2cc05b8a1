typedef int wip_placeholder_engine;
