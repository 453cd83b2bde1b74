"""``nao-ik report``: the papers' experiments reproduced and the alternatives compared.

One module per paper or question (alone, fig3, sec53: Poddighe; ot, ot_track, ot_fm, planar: Oyama & Tachi;
kt, kt_net, kt_pose: Kim & Tarokh; peers; stats) and build: the report's tables, figures and text.
"""
