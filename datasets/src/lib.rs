//! Datasets: the Parquet schema for positions and games, atomic shard writing and sliding-window
//! reading. (Built in a later issue.)
