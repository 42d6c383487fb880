B
past_cacheJ
lÀè>d@4?‚?