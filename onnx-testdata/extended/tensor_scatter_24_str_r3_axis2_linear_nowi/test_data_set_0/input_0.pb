2日20 2ß 2ab0B
past_cache