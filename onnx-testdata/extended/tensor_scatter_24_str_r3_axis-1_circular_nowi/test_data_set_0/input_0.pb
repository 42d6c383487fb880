2zé20éa2A2ab2z2日2ab2ab2éB
past_cache