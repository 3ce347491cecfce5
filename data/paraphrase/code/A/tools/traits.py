import rs, sys, os, re, collections
from stats import trait_of
