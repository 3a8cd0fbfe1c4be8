"""trec_eval 10.0's explanation of each qrels measure, verbatim (``-h -m NAME``).

Some explanations lack a final newline, as in trec_eval (its next name then
prints on the same line).
"""

from __future__ import annotations

DOCS: dict[str, str] = {
    "runid": (
        "    Runid given by results input file.\n"
    ),
    "num_q": (
        "    Number of topics results averaged over.  May be different from\n"
        "    number of topics in the results file if -c was used on the command line \n"
        "    in which case number of topics in the rel_info file is used.\n"
    ),
    "num_ret": (
        "    Number of documents retrieved for topic. \n"
        "    May be affected by Judged_docs_only and Max_retrieved_per_topic command\n"
        "    line parameters (as are most measures).\n"
        "    Summary figure is sum of individual topics, not average.\n"
    ),
    "num_rel": (
        "    Number of relevant documents for topic. \n"
        "    May be affected by Judged_docs_only and Max_retrieved_per_topic command\n"
        "    line parameters (as are most measures).\n"
        "    Summary figure is sum of individual topics, not average.\n"
    ),
    "num_rel_ret": (
        "    Number of relevant documents retrieved for topic. \n"
        "    May be affected by Judged_docs_only and Max_retrieved_per_topic command\n"
        "    line parameters (as are most measures).\n"
        "    Summary figure is sum of individual topics, not average.\n"
    ),
    "map": (
        "    Mean Average Precision\n"
        "    Precision measured after each relevant doc is retrieved, then averaged\n"
        "    for the topic, and then averaged over topics (if more than one).\n"
        "    This is the main single-valued number used to compare the entire rankings\n"
        "    of two or more retrieval methods.  It has proven in practice to be useful\n"
        "    and robust.\n"
        "    The name of the measure is unfortunately inaccurate since it is \n"
        "    calculated for a single topic (and thus don't want both 'mean' and\n"
        "    'average') but was dictated by common usage and the need to distiguish\n"
        "    map from Precision averaged over topics (I had to give up my attempts to\n"
        "    call it something else!)\n"
        "    History: Developed by Chris Buckley after TREC 1.\n"
        "    Cite: 'Retrieval System Evaluation', Chris Buckley and Ellen Voorhees.\n"
        "    Chapter 3 in TREC: Experiment and Evaluation in Information Retrieval\n"
        "    edited by Ellen Voorhees and Donna Harman.  MIT Press 2005\n"
    ),
    "gm_map": (
        "    Geometric Mean Average Precision\n"
        "    This is the same measure as 'map' (see description of 'map') on an\n"
        "    individual topic, but the geometric mean is calculated when averaging\n"
        "    over topics.  This rewards methods that are more consistent over topics\n"
        "    as opposed to methods which do very well for some topics but very poorly\n"
        "    for others.\n"
        "    gm_ap is reported only in the summary over all topics, not for individual\n"
        "    topics.\n"
    ),
    "Rprec": (
        "    Precision after R documents have been retrieved.\n"
        "    R is the total number of relevant docs for the topic.  \n"
        "    This is a good single point measure for an entire retrieval\n"
        "    ranking that averages well since each topic is being averaged\n"
        "    at an equivalent point in its result ranking.\n"
        "    Note that this is the point that Precision = Recall.\n"
        "    History: Originally developed for IR rankings by Chris Buckley\n"
        "    after TREC 1, but analogs were used in other disciplines previously.\n"
        "    (the point where P = R is an important one!)\n"
        "    Cite: 'Retrieval System Evaluation', Chris Buckley and Ellen Voorhees.\n"
        "    Chapter 3 in TREC: Experiment and Evaluation in Information Retrieval\n"
        "    edited by Ellen Voorhees and Donna Harman.  MIT Press 2005\n"
    ),
    "bpref": (
        "    Main binary preference measure.\n"
        "    Fraction of the top R nonrelevant docs that are retrieved after each\n"
        "    relevant doc. Put another way: when looking at the R relevant docs, and\n"
        "    the top R nonrelevant docs, if all relevant docs are to be preferred to\n"
        "    nonrelevant docs, bpref is the fraction of the preferences that the\n"
        "    ranking preserves.\n"
        "    Cite: 'Retrieval Evaluation with Incomplete Information', Chris Buckley\n"
        "    and Ellen Voorhees. In Proceedings of 27th SIGIR, 2004.\n"
    ),
    "recip_rank": (
        "    Reciprocal Rank of the first relevant retrieved doc.\n"
        "    Measure is most useful for tasks in which there is only one relevant\n"
        "    doc, or the user only wants one relevant doc.\n"
    ),
    "iprec_at_recall": (
        "    Interpolated Precision at recall cutoffs.\n"
        "    This is the data shown in the standard Recall-Precision graph.\n"
        "    The standard cutoffs and interpolation are needed to average data over\n"
        "    multiple topics; otherwise, how is a topic with 5 relevant docs averaged\n"
        "    with a topic with 3 relevant docs for graphing purposes?  The Precision \n"
        "    interpolation used here is\n"
        "      Int_Prec (rankX) == MAX (Prec (rankY)) for all Y >= X.\n"
        "    Default usage: -m iprec_at_recall.0,.1,.2,.3,.4,.5,.6,.7,.8,.9,1 ...\n"
    ),
    "P": (
        "    Precision at cutoffs\n"
        "    Precision measured at various doc level cutoffs in the ranking.\n"
        "    If the cutoff is larger than the number of docs retrieved, then\n"
        "    it is assumed nonrelevant docs fill in the rest.  Eg, if a method\n"
        "    retrieves 15 docs of which 4 are relevant, then P20 is 0.2 (4/20).\n"
        "    Precision is a very nice user oriented measure, and a good comparison\n"
        "    number for a single topic, but it does not average well. For example,\n"
        "    P20 has very different expected characteristics if there 300\n"
        "    total relevant docs for a topic as opposed to 10.\n"
        "    Note:   trec_eval -m P.50 ...\n"
        "    is different from \n"
        "            trec_eval -M 50 -m set_P ...\n"
        "    in that the latter will not fill in with nonrel docs if less than 50\n"
        "    docs retrieved\n"
        "    Cutoffs must be positive without duplicates\n"
        "    Default param: -m P.5,10,15,20,30,100,200,500,1000\n"
    ),
    "relstring": (
        "    The relevance values for the first N (default 10) retrieved docs\n"
        "    are printed as a string, one character per relevance value for a doc.\n"
        "    If the relevance value is between 0 and 9, it is printed.\n"
        "    If the value is > 9,  '>' is printed.\n"
        "    If the document was not in the pool to be judged, '-' is printed.\n"
        "    if the document was in the pool, but unjudged (eg, infAP),  '.' is printed\n"
        "    if the document has some other relevance value, '<' is printed.\n"
        "    Measure is only printed for individual queries.\n"
        "    Default usage:  -m relstring.10 \n"
    ),
    "recall": (
        "    Recall at cutoffs\n"
        "    Recall (relevant retrieved / relevant) measured at various doc level\n"
        "    cutoffs in the ranking. If the cutoff is larger than the number of docs\n"
        "    retrieved, then it is assumed nonrelevant docs fill in the rest.\n"
        "    REcall is a fine single topic measure, but does not average well.\n"
        "    Cutoffs must be positive without duplicates\n"
        "    Default param: -m recall.5,10,15,20,30,100,200,500,1000\n"
    ),
    "infAP": (
        "    Inferred AP\n"
        "    A measure that allows sampling of judgement pool: Qrels/results divided\n"
        "    into unpooled, pooled_but_unjudged, pooled_judged_rel,pooled_judged_nonrel.\n"
        "    My intuition of infAP:\n"
        "    Assume a judgment pool with a random subset that has been judged.\n"
        "    Calculate P at rel doc using only the judged higher retrieved docs,\n"
        "    then average in 0's from higher docs that were not in the judgment pool.\n"
        "    (Those in the pool but not judged are ignored, since they are assumed\n"
        "    to be relevant in the same proportion as those judged.)\n"
        "    Cite:    'Estimating Average Precision with Incomplete and Imperfect\n"
        "    Judgments', Emine Yilmaz and Javed A. Aslam. CIKM \n"
    ),
    "gm_bpref": (
        "   Binary preference (bpref), but using goemetric mean over topics\n"
        "    See the explanation for 'bpref' for the base measure for a single topic.\n"
        "    Gm_bpref uses the geometric mean to combine the single topic scores.\n"
        "    This rewards methods that are more consistent across topics as opposed to\n"
        "    high scores for some topics and low scores for others.\n"
        "    Gm_bpref is printed only as a summary measure across topics, not for the\n"
        "    individual topics.\n"
    ),
    "Rprec_mult": (
        "    Precision measured at multiples of R (num_rel).\n"
        "    This is an attempt to measure topics at the same multiple milestones\n"
        "    in a retrieval (see explanation of R-prec), in order to determine\n"
        "    whether methods are precision oriented or recall oriented.  If method A\n"
        "    dominates method B at the low multiples but performs less well at the\n"
        "    high multiples then it is precision oriented (compared to B).\n"
        "    Default param: -m Rprec_mult.0.2,0.4,0.6,0.8,1.0,1.2,1.4,1.6,1.8,2.0 ...\n"
    ),
    "utility": (
        "    Set utility measure\n"
        "    Set evaluation based on contingency table:\n"
        "                        relevant  nonrelevant\n"
        "       retrieved            a          b\n"
        "       nonretrieved         c          d\n"
        "    where  utility = p1 * a + p2 * b + p3 * c + p4 * d\n"
        "    and p1-4 are parameters (given on command line in that order).\n"
        "    Conceptually, each retrieved relevant doc is worth something positive to\n"
        "    a user, each retrieved nonrelevant doc has a negative worth, each \n"
        "    relevant doc not retrieved may have a negative worth, and each\n"
        "    nonrelevant doc not retrieved may have a (small) positive worth.\n"
        "    The overall measure is simply a weighted sum of these values.\n"
        "    If p4 is non-zero, then '-N num_docs_in_coll' may also be needed - the\n"
        "    standard results and rel_info files do not contain that information.\n"
        "    Default usage: -m utility.1.0,-1.0,0.0,0.0 ...\n"
        "    Warning: Current version summary evaluation averages over all topics;\n"
        "    it could be argued that simply summing is more useful (but not backward\n"
        "    compatible)\n"
    ),
    "11pt_avg": (
        "    Interpolated Precision averaged over 11 recall points\n"
        "    Obsolete, only use for comparisons of old runs; should use map instead.\n"
        "    Average interpolated at the given recall points - default is the\n"
        "    11 points being reported for ircl_prn.\n"
        "    Both map and 11-pt_avg (and even R-prec) can be regarded as estimates of\n"
        "    the area under the standard ircl_prn curve.\n"
        "    Warning: name assumes user does not change default parameter values:\n"
        "    measure name is independent of parameter values and number of parameters.\n"
        "    Will actually average over all parameter values given.\n"
        "    To get 3-pt_avg as in trec_eval version 8 and earlier, use\n"
        "      trec_eval -m 11-pt_avg.0.2,0.5,0.8 ...\n"
        "    Default usage: -m 11-pt_avg.0.0,.1,.2,.3,.4,.5,.6,.7,.8..9,1.0\n"
    ),
    "binG": (
        "    Binary "
    ),
    "G": (
        "    Experimental measure. (4/10/2008)\n"
        "    G is a gain related measure that combines qualities of MAP and NDCG.\n"
        "    G(doc) == rel_level_gain (doc) / log2 (2+num_nonrel retrieved before doc)\n"
        "    G is the average of G(doc) over all docs, normalized by\n"
        "    sum (rel_level_gain).\n"
        "    BinG restricts the gain to either 0 or 1 (nonrel or rel), and thus is the\n"
        "    average over all rel docs of (1 / log2 (2+num_nonrel before doc))\n"
        "G\n"
        "    Normalized Gain\n"
        "    Experimental measure 4/10/2008\n"
        "    G is a gain related measure that combines qualities of MAP and NDCG.\n"
        "    Contribution of doc doc retrieved at rank i is \n"
        "    G(doc) == gain (doc) / log2 (2+ideal_gain(i)-results_gain(i))\n"
        "    where results_gain(i) is sum gain(doc) for all docs before i\n"
        "    and ideal_gain is the maximum possible results_gain(i)\n"
        "    G is the sum of G(doc) over all docs, normalized by max ideal_gain.\n"
        "    Gain values are set to the appropriate relevance level by default.  \n"
        "    The default gain can be overridden on the command line by having \n"
        "    comma separated parameters 'rel_level=gain'.\n"
        "    Eg, 'trec_eval -m G.1=3.5,2=9.0,4=7.0 ...'\n"
        "    will give gains 3.5, 9.0, 3.0, 7.0 for relevance levels 1,2,3,4\n"
        "    respectively (level 3 remains at the default).\n"
        "    Gains are allowed to be 0 or negative, and relevance level 0\n"
        "    can be given a gain.\n"
        "    The idea behind G is that the contribution of a doc retrieved at i\n"
        "    should not be independent of the docs before. If most docs before have\n"
        "    higher gain, then the retrieval of this doc at i is nearly as good as \n"
        "    possible, and should be rewarded appropriately\n"
    ),
    "dcg": (
        "    Discounted Cumulative Gain"
    ),
    "ideal_dcg": (
        "    Ideal Discounted Cumulative Gain"
    ),
    "ndcg": (
        "    Normalized Discounted Cumulative Gain\n"
        "    Compute a traditional nDCG measure according to Jarvelin and\n"
        "    Kekalainen (ACM ToIS v. 20, pp. 422-446, 2002)\n"
        "    Gain values are set to the appropriate relevance level by default.  \n"
        "    The default gain can be overridden on the command line by having \n"
        "    comma separated parameters 'rel_level=gain'.\n"
        "    Eg, 'trec_eval -m ndcg.1=3.5,2=9.0,4=7.0 ...'\n"
        "    will give gains 3.5, 9.0, 3.0, 7.0 for relevance levels 1,2,3,4\n"
        "    respectively (level 3 remains at the default).\n"
        "    Gains are allowed to be 0 or negative, and relevance level 0\n"
        "    can be given a gain.\n"
        "    Based on an implementation by Ian Soboroff\n"
    ),
    "ndcg_rel": (
        "    Normalized Discounted Cumulative Gain averaged over rel docs\n"
        "    Experimental measure\n"
        "    Compute a traditional nDCG measure according to Jarvelin and\n"
        "    Kekalainen (ACM ToIS v. 20, pp. 422-446, 2002), averaged at rel docs.\n"
        "    Idea behind ndcg_rel, is that the expected value of ndcg is a smoothly\n"
        "    decreasing function, with discontinuities upward at each transistion\n"
        "    between positive gain levels in the ideal ndcg.  Once the gain level \n"
        "    becomes 0, the expected value of ndcg then increases until all rel docs are\n"
        "    retrieved. Thus averaging ndcg is problematic, because these transistions\n"
        "    occur at different points for each topic.  Since it is not unusual for\n"
        "    ndcg to start off near 1.0, decrease to 0.25, and then increase to 0.75\n"
        "    at various cutoffs, the points at which ndcg is measured are important.\n"
        "    This version averages ndcg over each relevant doc, where relevant is\n"
        "    defined as expected gain > 0.  If a rel doc is not retrieved, then\n"
        "    ndcg for the doc is the dcg at the end of the retrieval / ideal dcg. \n"
        "    \n"
        "    Gain values are set to the appropriate relevance level by default.  \n"
        "    The default gain can be overridden on the command line by having \n"
        "    comma separated parameters 'rel_level=gain'.\n"
        "    Eg, 'trec_eval -m ndcg_rel.1=3.5,2=9.0,4=7.0 ...'\n"
        "    will give gains 3.5, 9.0, 3.0, 7.0 for relevance levels 1,2,3,4\n"
        "    respectively (level 3 remains at the default).\n"
        "    Gains are allowed to be 0 or negative, and relevance level 0\n"
        "    can be given a gain.\n"
    ),
    "Rndcg": (
        "    Normalized Discounted Cumulative Gain at R levels\n"
        "    Experimental measure\n"
        "    Compute a traditional nDCG measure according to Jarvelin and\n"
        "    Kekalainen (ACM ToIS v. 20, pp. 422-446, 2002), averaged at the various\n"
        "    R level points. The R levels are the number of docs at each non-negative\n"
        "    gain level in the judgments, with the gain levels sorted in decreasing\n"
        "    order. Thus if there are 5 docs with gain_level 3, 3 with gain 2, 10\n"
        "    with gain 1, and 50 with gain 0, then \n"
        "    Rndcg = 1/4 (ndcg_at_5 + ndcg_at_8 + ndcg_at_18 + ndcg_at_68).\n"
        "    In this formulation, all unjudged docs have gain 0.0, and thus there is\n"
        "    a final implied R-level change at num_retrieved.\n"
        "    Idea behind Rndcg, is that the expected value of ndcg is a smoothly\n"
        "    decreasing function, with discontinuities upward at each transistion\n"
        "    between positive gain levels in the ideal ndcg.  Once the gain level \n"
        "    becomes 0, the expected value of ndcg then increases until all docs are\n"
        "    retrieved. Thus averaging ndcg is problematic, because these transistions\n"
        "    occur at different points for each topic.  Since it is not unusual for\n"
        "    ndcg to start off near 1.0, decrease to 0.25, and then increase to 0.75\n"
        "    at various cutoffs, the points at which ndcg is measured are important.\n"
        "    \n"
        "    Gain values are set to the appropriate relevance level by default.  \n"
        "    The default gain can be overridden on the command line by having \n"
        "    comma separated parameters 'rel_level=gain'.\n"
        "    Eg, 'trec_eval -m Rndcg.1=3.5,2=9.0,4=7.0 ...'\n"
        "    will give gains 3.5, 9.0, 3.0, 7.0 for relevance levels 1,2,3,4\n"
        "    respectively (level 3 remains at the default).\n"
        "    Gains are allowed to be 0 or negative, and relevance level 0\n"
        "    can be given a gain.\n"
    ),
    "ndcg_cut": (
        "    Normalized Discounted Cumulative Gain at cutoffs.\n"
        "    Compute a traditional nDCG measure according to Jarvelin and\n"
        "    Kekalainen (ACM ToIS v. 20, pp. 422-446, 2002) at cutoffs.\n"
        "    See comments for ndcg.\n"
        "    Gain values are the relevance values in the qrels file.  For now, if you\n"
        "    want different gains, change the qrels file appropriately.\n"
        "    Cutoffs must be positive without duplicates\n"
        "    Default params: -m ndcg_cut.5,10,15,20,30,100,200,500,1000\n"
        "    Based on an implementation by Ian Soboroff\n"
    ),
    "map_cut": (
        "    Mean Average Precision at cutoffs\n"
        "    Map measured at various doc level cutoffs in the ranking.\n"
        "    If the cutoff is larger than the number of docs retrieved, then\n"
        "    it is assumed nonrelevant docs fill in the rest.\n"
        "    Map itself is precision measured after each relevant doc is retrieved,\n"
        "    averaged over all relevant docs for the topic.\n"
        "    Cutoffs must be positive without duplicates\n"
        "    Default param: -m map_cut.5,10,15,20,30,100,200,500,1000\n"
    ),
    "relative_P": (
        "    Relative Precision at cutoffs\n"
        "    Precision at cutoff relative to the maximum possible precision at that\n"
        "    cutoff.  Equivalent to Precision up until R, and then recall after R\n"
        "    Cutoffs must be positive without duplicates\n"
        "    Default params: -m relative_P.5,10,15,20,30,100,200,500,1000\n"
    ),
    "success": (
        "    Success at cutoffs\n"
        "    Success (a relevant doc has been retrieved) measured at various doc level\n"
        "    cutoffs in the ranking.\n"
        "    If the cutoff is larger than the number of docs retrieved, then\n"
        "    it is assumed nonrelevant docs fill in the rest.\n"
        "    Cutoffs must be positive without duplicates\n"
        "    Default param: trec_eval -m success.1,5,10\n"
        "    History: Developed by Stephen Tomlinson.\n"
    ),
    "set_P": (
        "    Set Precision: num_relevant_retrieved / num_retrieved \n"
        "    Precision over all docs retrieved for a topic.\n"
        "    Was known as exact_prec in earlier versions of trec_eval\n"
        "    Note:   trec_eval -m P.50 ...\n"
        "    is different from \n"
        "            trec_eval -M 50 -m set_P ...\n"
        "    in that the latter will not fill in with nonrel docs if less than \n"
        "    50 docs retrieved\n"
    ),
    "set_relative_P": (
        "    Relative Set Precision:  P / (Max possible P for this size set) \n"
        "    Relative precision over all docs retrieved for a topic.\n"
        "    Was known as exact_relative_prec in earlier versions of trec_eval\n"
        "    Note:   trec_eval -m relative_P.50 ...\n"
        "    is different from \n"
        "            trec_eval -M 50 -m set_relative_P ...\n"
    ),
    "set_recall": (
        "    Set Recall: num_relevant_retrieved / num_relevant \n"
        "    Recall over all docs retrieved for a topic.\n"
        "    Was known as exact_recall in earlier versions of trec_eval"
    ),
    "set_map": (
        "    Set map: num_relevant_retrieved**2 / (num_retrieved*num_rel)\n"
        "    Unranked set map, where the precision due to all relevant retrieved docs\n"
        "    is the set precision, and the precision due to all relevant not-retrieved\n"
        "    docs is set to 0.\n"
        "    Was known as exact_unranked_avg_prec in earlier versions of trec_eval.\n"
        "    Another way of loooking at this is  Recall * Precision on the set of\n"
        "    docs retrieved for a topic.\n"
    ),
    "set_F": (
        "      Set F measure: weighted harmonic mean of recall and precision\n"
        "    set_Fx = (x+1) * P * R / (R + x*P)\n"
        "    where x is the relative importance of R to P (default 1.0).\n"
        "    Default usage: trec_eval -m set_F.1.0 ...\n"
        "    Cite: Variant of van Rijsbergen's E measure ('Information Retrieval',\n"
        "    Butterworths, 1979).\n"
    ),
    "num_nonrel_judged_ret": (
        "    Number of non-relevant judged documents retrieved for topic. \n"
        "    Not an evaluation number per se, but gives details of retrieval results.\n"
        "    Summary figure is sum of individual topics, not average.\n"
    ),
}
